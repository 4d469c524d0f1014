import Dispatch
import Foundation
import JSON
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// Disk full (here: the database held at its `PRAGMA max_page_count`, which SQLite reports as
/// SQLITE_FULL exactly like a full disk), `/-/ready`, its probe and recovery, in process.
/// A real full file system and a read-only file run in Tests/EndToEnd/disk_faults_test.py.
@Suite struct StoreHealthTests {
    static func bigBatch(_ prefix: String, count: Int) -> [JSONValue] {
        (0..<count).map { i in
            JSONValue(["id": "\(prefix)-\(i)", "type": "activity.started", "activity_id": "\(prefix)-\(i)",
                       "booking_id": "BK-\(prefix)", "attributes_type": "LiveActivityAttributes",
                       "occurred_at": TestServer.base - 60,
                       "content_state": ["note": String(repeating: "x", count: 2000)]] as [String: Any])
        }
    }

    static func setMaxPageCount(_ store: EventStore, to pages: Int64?) {
        let result = store.submit(.withConnection { db in
            let limit = try pages ?? db.scalar("PRAGMA page_count")?.int64Value ?? 0
            try db.execute("PRAGMA max_page_count = \(limit)")
        })
        #expect(result == .success(IngestSummary()))
    }

    @Test func fullDatabaseIs503StoresNothingAndRecoversOnItsOwn() throws {
        let server = try TestServer()
        defer { server.stop() }
        let store = server.server.store
        #expect(try server.post(events: [IngestTests.started("before")]).status == 200)
        #expect(try server.get("/-/ready").status == 200)

        Self.setMaxPageCount(store, to: nil)   // no room for one more page
        let batch = Self.bigBatch("full", count: 50)
        let refused = try server.post(events: batch)
        #expect(refused.status == 503)
        #expect(refused.text.contains("full"), "\(refused.text)")
        #expect(refused.text.contains("nothing from this request was stored"))
        #expect(refused.headers["retry-after"] == "5")
        for id in ["full-0", "full-49"] { #expect(try server.get("/api/activities/\(id)").status == 404) }
        #expect(try server.metric("liveactivity_ingest_events_total{type=\"activity.started\"}") == 1)
        #expect(try server.metric("liveactivity_ingest_rejected_total{reason=\"unavailable\"}") == 1)
        #expect(try server.get("/-/healthy").status == 200)

        var ready = try server.get("/-/ready")
        #expect(ready.status == 503)
        #expect(ready.text.contains("not ready: the database is full (it reached max_page_count"), "\(ready.text)")

        Self.setMaxPageCount(store, to: 1 << 30)   // space returns
        store.lastProbe.withLock { $0 = DispatchTime.now().uptimeNanoseconds }
        ready = try server.get("/-/ready")
        #expect(ready.status == 503, "probed again within a second: \(ready.text)")
        store.lastProbe.withLock { $0 = 0 }
        ready = try server.get("/-/ready")
        #expect(ready.status == 200, "\(ready.text)")

        let stored = try server.post(events: batch)
        #expect(stored.text == #"{"accepted":50,"duplicates":0}"#)
        #expect(try server.metric("liveactivity_ingest_events_total{type=\"activity.started\"}") == 51)
    }

    /// A rolled-back or empty transaction never reaches the disk; the probe's must.
    @Test func theProbeCommitsARealWrite() throws {
        let server = try TestServer()
        defer { server.stop() }
        let store = server.server.store
        let observer = try Database(path: server.configuration.databasePath, mode: .readOnly)
        func dataVersion() throws -> Int64 { try observer.scalar("PRAGMA data_version")?.int64Value ?? -1 }
        let before = try dataVersion()
        store.writeFailure.withLock { $0 = "a failure that has since gone away" }
        #expect(try server.get("/-/ready").status == 200)
        #expect(try dataVersion() != before, "another connection committed: the probe wrote")
        #expect(store.writeFailure.withLock { $0 } == nil)
    }

    @Test func aClosedStoreIsNotReady() throws {
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try EventStore(path: directory + "/db.sqlite")
        #expect(store.readinessProblem() == nil)
        store.close()
        #expect(store.readinessProblem() == "the store is closed")
    }
}
