import Foundation
import LiveActivityMonitor
import SQLiteDB
import Testing
@testable import live_activity_monitor_bench

/// "SQLite itself" must read exactly start-up's live rows, or say it did not.
@Suite struct SQLiteFloorTests {
    /// A store's file with `live` live rows and every third of as many again dismissed.
    static func file(live: Int) throws -> (path: String, remove: () -> Void) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/floor.sqlite"
        try EventStore(path: path).close()
        let db = try Database(path: path)
        try db.execute("BEGIN")
        for i in 0..<(live + live / 3) {
            try insert(db, id: "floor-\(i)", dismissedAt: i % 4 == 3 ? 1_700_000_100 : nil)
        }
        try db.execute("COMMIT")
        return (path, { try? FileManager.default.removeItem(atPath: directory) })
    }

    static func insert(_ db: Database, id: String, dismissedAt: Double?) throws {
        try db.run("""
            INSERT INTO activities (activity_id, attributes_type, source, started_at, content_timestamp, reported_stale,
                                    stale_counted, token_rotations, priority10_times, dismissed_at)
            VALUES (?, 'FloorAttributes', 'app', 1700000000, 1700000000, 0, 0, 0, '', ?)
            """, [.text(id), dismissedAt.map(SQLiteValue.real) ?? .null])
    }

    /// Enough rows for start-up's split over its readers: every live row read, once.
    @Test func readsEveryLiveRow() throws {
        let (path, remove) = try Self.file(live: 45_000)
        defer { remove() }
        let ranges = try LiveRowRanges.of(path: path)
        #expect(ranges.live == 45_000)
        #expect(ranges.readers == min(4, ProcessInfo.processInfo.activeProcessorCount), "read as start-up reads them")
        #expect(ranges.parts.count == ranges.readers * 8)
        #expect(try SQLiteFloor.read(path: path, ranges: ranges).rows == 45_000)
    }

    /// Rows that changed after the ranges were made: more read than were live, so it fails.
    @Test func failsWhenTheRowsReadAreNotTheLiveCount() throws {
        let (path, remove) = try Self.file(live: 300)
        defer { remove() }
        let ranges = try LiveRowRanges.of(path: path)
        try Self.insert(try Database(path: path), id: "floor-late", dismissedAt: nil)
        #expect(throws: BenchError.self) { _ = try SQLiteFloor.read(path: path, ranges: ranges) }
    }
}
