import Foundation
import SQLiteDB
import Synchronization
import Testing
import TestSupport
@testable import LiveActivityMonitor

/// Start-up's split of the live rows (`LiveRowRanges`) and how its parts are dealt to the
/// readers: a wrong split is not an error at start-up (the rows are read again on one
/// connection), only slower, so it is checked here.
@Suite struct LiveRowRangesTests {
    /// A store's file whose live rows lie among dismissed ones (every third dismissed).
    static func withFile(rows: Int, _ body: (Database) throws -> Void) throws {
        let directory = try TemporaryDirectory.make()
        defer { try? TemporaryDirectory.remove(directory) }
        let path = directory + "/ranges.sqlite"
        try EventStore(path: path).close()
        let db = try Database(path: path)
        try db.execute("BEGIN")
        for i in 0..<rows {
            try db.run("""
                INSERT INTO activities (activity_id, attributes_type, source, started_at, content_timestamp, reported_stale,
                                        stale_counted, token_rotations, priority10_times, dismissed_at)
                VALUES (?, 'RangeAttributes', 'app', 1700000000, 1700000000, 0, 0, 0, '', ?)
                """, [.text("range-\(i)"), i % 3 == 2 ? .real(1_700_000_100) : .null])
        }
        try db.execute("COMMIT")
        try body(db)
    }

    /// Each part's bounds select exactly the rows its positions hold, and the parts together
    /// every live row once, in rowid order: with more parts than rows too.
    @Test(arguments: [(rows: 3_000, readers: 2), (rows: 3_000, readers: 3), (rows: 10, readers: 2), (rows: 0, readers: 2)])
    func partsHoldEachLiveRowOnce(rows: Int, readers: Int) throws {
        try Self.withFile(rows: rows) { db in
            let live = try LiveRowRanges.liveCount(db)
            let ranges = try LiveRowRanges(db, live: live, readers: readers)
            #expect(ranges.readers == readers)
            #expect(ranges.parts.count == readers * LiveRowRanges.partsPerReader)
            var read: [Int64] = []
            let select = try db.prepare(LiveRowRanges.selectSQL)
            for part in ranges.parts {
                try select.bind([.integer(part.firstRowid), .integer(part.lastRowid)])
                var rowids: [Int64] = []
                while try select.step() { rowids.append(select.int64(0)) }
                select.reset()
                #expect(rowids.count == part.positions.count, "part \(part.positions)")
                #expect(part.positions.lowerBound == read.count)
                read += rowids
            }
            let allLive = try db.prepare("SELECT rowid FROM activities WHERE dismissed_at IS NULL ORDER BY rowid")
            var expected: [Int64] = []
            while try allLive.step() { expected.append(allLive.int64(0)) }
            #expect(read == expected)
            #expect(live == rows - rows / 3)
        }
    }

    /// Every part is read once, on as many threads as readers, and an error stops the dealing.
    @Test func partsAreDealtOnceEach() throws {
        try Self.withFile(rows: 300) { db in
            let ranges = try LiveRowRanges(db, live: try LiveRowRanges.liveCount(db), readers: 3)
            let threads = Mutex<Set<UInt>>([])
            let read = ranges.readParts(threadName: "ranges-test") {
                return { k in
                    threads.withLock { _ = $0.insert(UInt(bitPattern: Int(bitPattern: pthread_self()))) }
                    // Slow enough that every thread takes some.
                    Thread.sleep(forTimeInterval: 0.002)
                    return k
                }
            }
            #expect(read.error == nil)
            #expect(read.byPart == ranges.parts.indices.map { $0 })
            #expect(threads.withLock { $0.count } == 3)

            struct Refused: Error {}
            let failed = ranges.readParts(threadName: "ranges-test") {
                return { k in
                    if k == 2 { throw Refused() }
                    Thread.sleep(forTimeInterval: 0.002)
                    return k
                }
            }
            #expect(failed.error is Refused)
            #expect(failed.byPart[2] == nil)
            #expect(failed.byPart.compactMap { $0 }.count < ranges.parts.count - 3, "no part taken after the error")
        }
    }
}
