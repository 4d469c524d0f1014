import Foundation
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// The background checkpointer copies commits into the database file while the server runs,
/// long before the writer's own automatic checkpoint (4,000 pages of log) would.
@Suite struct CheckpointerTests {
    /// Events in a copy of the database file alone, without its -wal file.
    static func eventsInFileAlone(_ path: String) throws -> Int64? {
        let copy = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: path, toPath: copy + "/db.sqlite")
        let db = try Database(path: copy + "/db.sqlite", mode: .readOnly)
        // A file that has never been checkpointed holds no tables yet.
        guard try db.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'events'") == .integer(1) else { return nil }
        return try db.scalar("SELECT count(*) FROM events")?.int64Value
    }

    @Test func commitsReachTheDatabaseFileWithinAFewPasses() throws {
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/db.sqlite"
        let store = try EventStore(path: path)
        defer { store.close() }
        let events = try IngestDecoder().decode(Array(IngestTests.started("ckpt").jsonString.utf8), format: .json)
        #expect(try store.ingest(events).get().accepted == 1)

        // A pass every 50 ms: allow 5 s on a loaded machine, poll every 50 ms.
        var found: Int64?
        for _ in 0..<100 where found != 1 {
            Thread.sleep(forTimeInterval: 0.05)
            // A copy taken while a pass writes may be torn: that counts as not yet.
            found = (try? Self.eventsInFileAlone(path)) ?? nil
        }
        #expect(found == 1, "the database file alone never held the committed event")
    }

    @Test func stopTwiceReturns() throws {
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let checkpointer = try Checkpointer(path: directory + "/db.sqlite")
        checkpointer.stop()
        let second = DispatchSemaphore(value: 0)
        Thread { checkpointer.stop(); second.signal() }.start()
        #expect(second.wait(timeout: .now() + 5) == .success, "the second stop() waited for ever")
    }
}
