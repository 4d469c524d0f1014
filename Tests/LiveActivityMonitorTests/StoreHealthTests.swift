import Dispatch
import Foundation
import HTTPServer
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

    /// A `/-/ready` probe that the writer takes in the same wake-up as a commit of events that
    /// fails runs right after that commit (`writeUntilStopped`) and makes its own checks: the
    /// failure stays, `/-/ready` fails, and the store is never called writable again meanwhile.
    @Test func aProbeInTheWakeUpOfAFailedCommitKeepsTheFailure() throws {
        let log = LogLines()
        let server = try TestServer { $0.log = { log.append($0) } }
        defer { server.stop() }
        let store = server.server.store
        let port = server.server.port
        #expect(try server.post(events: [IngestTests.started("before")]).status == 200)
        Self.setMaxPageCount(store, to: nil)   // no room for one more page
        #expect(try server.post(events: Self.bigBatch("first", count: 50)).status == 503)
        #expect(store.writeFailure.withLock { $0 } != nil, "a failing store: /-/ready probes it")

        // The writer held by a job of its own until an ingest and a probe wait behind it: its
        // next wake-up takes both, commits the ingest, then runs the probe.
        let writerHeld = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        Thread { _ = store.submit(.withConnection { _ in writerHeld.signal(); release.wait() }) }.start()
        writerHeld.wait()
        store.lastProbe.withLock { $0 = 0 }   // the next /-/ready probes
        let answers = Locked([String: HTTPClient.Response]())
        let answered = DispatchGroup()
        let batch = JSONValue.array(Self.bigBatch("same", count: 50)).jsonString
        for (name, method, path, body) in [("ingest", "POST", "/v1/events", batch), ("ready", "GET", "/-/ready", "")] {
            answered.enter()
            Thread {
                defer { answered.leave() }
                let client = HTTPClient(port: port)
                defer { client.close() }
                let response = try? client.request(method, path, headers: [("Content-Type", "application/json")],
                                                   body: Array(body.utf8))
                answers.withLock { $0[name] = response }
            }.start()
        }
        func waiting() -> (ingest: Bool, probe: Bool) {
            let kinds = store.queuedKinds
            return (kinds.contains { if case .ingest = $0 { true } else { false } },
                    kinds.contains { if case .probe = $0 { true } else { false } })
        }
        let deadline = Date().addingTimeInterval(10)
        while waiting() != (true, true), Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        #expect(waiting() == (true, true), "the ingest and the probe wait for the same wake-up")
        release.signal()
        #expect(answered.wait(timeout: .now() + 30) == .success)

        let ingest = answers.withLock { $0["ingest"] }, ready = answers.withLock { $0["ready"] }
        #expect(ingest?.status == 503, "\(ingest?.text ?? "no answer")")
        #expect(ready?.status == 503, "the probe after the failed commit called the store ready: \(ready?.text ?? "no answer")")
        #expect(ready?.text.contains("the database is full") == true, "\(ready?.text ?? "no answer")")
        #expect(store.writeFailure.withLock { $0 } != nil)
        #expect(!log.value.contains { $0.contains("writable again") }, "\(log.value)")
        #expect(try server.post(events: Self.bigBatch("after", count: 50)).status == 503, "ingest still fails")

        Self.setMaxPageCount(store, to: 1 << 30)   // space returns: the same probe says so
        store.lastProbe.withLock { $0 = 0 }
        #expect(try server.get("/-/ready").status == 200)
        #expect(log.value.filter { $0.contains("writable again") }.count == 1, "\(log.value)")
        #expect(try server.post(events: Self.bigBatch("after", count: 50)).status == 200)
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

    /// A second writer (another `serve`, an `import`) would overwrite this one's counters.
    @Test func aDatabaseHasOneStoreAtATime() throws {
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/db.sqlite"
        let store = try EventStore(path: path)
        #expect {
            try EventStore(path: path)
        } throws: { error in
            "\(error)".contains("in use by another live-activity-monitor process")
        }
        store.close()
        try EventStore(path: path).close()
    }

    /// A closed store lets go of its files (a caller may delete them at once): no descriptor of
    /// this process still names the database, its -wal or -shm.
    @Test func aClosedStoreHoldsNoDescriptorOnItsFiles() throws {
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/db.sqlite"
        let store = try EventStore(path: path)
        _ = try store.record("nobody")  // borrows a read connection
        func open() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap {
                try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)
            }.filter { $0.hasPrefix(path) }
        }
        #expect(try !open().isEmpty)
        store.close()
        let left = try open()
        #expect(left == [], "still open after close: \(left)")
        withExtendedLifetime(store) {}
    }

    /// A file from a newer version is refused untouched (not even switched to WAL).
    @Test func aNewerDatabaseIsRefusedUnchanged() throws {
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/db.sqlite"
        try Database(path: path).setUserVersion(99)
        #expect {
            try EventStore(path: path)
        } throws: { error in
            "\(error)".contains("written by a newer version")
        }
        #expect(try Database(path: path).scalar("PRAGMA journal_mode") == .text("delete"))
    }

    /// Deleted (or replaced) under the running server: the server refuses what it could not
    /// keep, says so once in its log, and `/-/ready` fails.
    @Test func aDeletedDatabaseFileRefusesWritesAndSaysSo() throws {
        let log = LogLines()
        let server = try TestServer { $0.log = { log.append($0) } }
        defer { server.stop() }
        #expect(try server.post(events: [IngestTests.started("a")]).status == 200)
        for suffix in ["", "-wal", "-shm"] { unlink(server.configuration.databasePath + suffix) }
        for i in 0..<3 {
            let r = try server.post(events: [IngestTests.started("b\(i)")])
            #expect(r.status == 503)
            #expect(r.text.contains("was deleted while the server ran"), "\(r.text)")
        }
        let ready = try server.get("/-/ready")
        #expect(ready.status == 503)
        #expect(ready.text.contains("was deleted"), "\(ready.text)")
        #expect(log.value.filter { $0.contains("store: cannot write") }.count == 1, "logged once: \(log.value)")
    }

    @Test func aReplacedDatabaseFileRefusesWrites() throws {
        let server = try TestServer()
        defer { server.stop() }
        let path = server.configuration.databasePath
        #expect(try server.post(events: [IngestTests.started("a")]).status == 200)
        try FileManager.default.moveItem(atPath: path, toPath: path + ".old")
        try Data().write(to: URL(fileURLWithPath: path))
        let r = try server.post(events: [IngestTests.started("b")])
        #expect(r.status == 503 && r.text.contains("was replaced"), "\(r.text)")
    }

    /// Refused requests are counted in memory until a commit writes them: one follows on its
    /// own, so that a crash right after a run of refusals keeps them.
    @Test func refusedRequestsReachTheDatabaseWithoutAnotherWrite() throws {
        let server = try TestServer()
        defer { server.stop() }
        for _ in 0..<3 { #expect(try server.post("{not json").status == 400) }
        let db = try Database(path: server.configuration.databasePath, mode: .readOnly)
        var stored = 0.0
        let deadline = Date().addingTimeInterval(5)
        while stored < 3, Date() < deadline {
            stored = try db.scalar("SELECT sum(value) FROM counters WHERE key LIKE '%ingest_rejected%'")?.doubleValue ?? 0
            if stored < 3 { Thread.sleep(forTimeInterval: 0.02) }
        }
        #expect(stored == 3, "rejections in the counters table without any further ingest")
    }

    /// …but a flood of refused requests is not a flood of commits: at most one a second.
    @Test func refusedRequestsAreWrittenAtMostOnceASecond() throws {
        let server = try TestServer()
        defer { server.stop() }
        let commits = "liveactivity_store_commit_seconds_count"
        let before = try #require(try server.metric(commits), "no \(commits) in /metrics")
        let started = Date()
        for _ in 0..<300 { _ = try server.post("{not json") }
        let seconds = Date().timeIntervalSince(started)
        let after = try #require(try server.metric(commits))
        #expect(after - before <= seconds.rounded(.up) + 1, "\(after - before) commits in \(seconds) s for 300 refusals")
    }

    /// A refusal being written is still counted in `/metrics`: a counter must never read lower
    /// than before (Prometheus takes a drop for a restart). The commit that writes it is held
    /// at SQLite's write lock, taken by another connection, while `/metrics` is read.
    @Test func aRefusalBeingWrittenStaysCounted() throws {
        let server = try TestServer()
        defer { server.stop() }
        let rejected = #"liveactivity_ingest_rejected_total{reason="malformed"}"#
        let other = try Database(path: server.server.store.path)
        try other.execute("BEGIN IMMEDIATE")
        #expect(try server.post("{not json").status == 400)
        Thread.sleep(forTimeInterval: 0.3)  // the writer has taken the count and waits for the lock
        #expect(try server.metric(rejected) == 1, "the refusal vanished from /metrics while its commit waited")
        try other.execute("ROLLBACK")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try server.metric(rejected) == 1)
    }
}
