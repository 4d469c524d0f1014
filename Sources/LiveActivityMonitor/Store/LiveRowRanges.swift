import Foundation
import SQLiteDB
import Synchronization

/// How start-up splits the live rows among its reader connections (`EventStore.liveRecords`):
/// into parts of equal counts (part `k` holds the live rows from the (k × live / parts)-th on,
/// in rowid order, read by `selectSQL` with its rowid bounds), several per reader, dealt to the
/// readers as they become free (`readParts`). Public so that the benchmark reads exactly these
/// rows, dealt so, with SQLite alone: start-up's floor ("SQLite itself", Tests/bench/PERFORMANCE.md).
public struct LiveRowRanges: Sendable {
    public struct Part: Sendable {
        /// Where its records go in the loaded array.
        public let positions: Range<Int>
        /// Its rows' first and last rowids, bound to `selectSQL`'s two parameters (the last
        /// below the first when it is empty).
        public let firstRowid: Int64, lastRowid: Int64
    }

    /// The rows that are live (not dismissed) when the ranges were made.
    public let live: Int
    /// How many threads read the parts at once.
    public let readers: Int
    public let parts: [Part]

    /// What start-up reads of one part's live rows: each row's rowid and its record in one
    /// column (`ActivityRecord.heldRecord`); bind a part's `firstRowid` and `lastRowid`.
    public static let selectSQL = selectHeldRecordsSQL + " WHERE dismissed_at IS NULL AND rowid BETWEEN ? AND ?"
    static let selectHeldRecordsSQL = "SELECT rowid, \(ActivityRecord.heldRecordColumn) FROM activities"

    /// Connections that read the live rows at start-up: one per processor (at most 4), so that
    /// SQLite's work and the making of the records, most of a load, run on each.
    static let loadReaders = min(4, ProcessInfo.processInfo.activeProcessorCount)
    /// Below this many live rows per connection, one connection reads them all.
    static let rowsPerLoadReader = 20_000
    /// Parts per reader: with one part each, the thread whose rows read faster (other rows,
    /// a later start) waited for the other, about a tenth of the load (session 26).
    static let partsPerReader = 8

    static func liveCount(_ db: Database) throws -> Int {
        Int(try db.scalar("SELECT count(*) FROM activities WHERE dismissed_at IS NULL")?.int64Value ?? 0)
    }

    /// The `live` rows in parts for `readers` threads (by default one per processor when there
    /// are enough rows): where each part's range of rowids starts is read from the
    /// `activities_live` index alone, each from the one before (one walk of its entries in all,
    /// a small part of the load).
    init(_ db: Database, live: Int, readers: Int?) throws {
        let readers = max(1, readers ?? min(Self.loadReaders, live / Self.rowsPerLoadReader))
        let count = readers == 1 ? 1 : readers * Self.partsPerReader
        let firsts = (0...count).map { $0 * live / count }
        let nextStart = try db.prepare("SELECT rowid FROM activities WHERE dismissed_at IS NULL AND rowid >= ?"
            + " ORDER BY rowid LIMIT 1 OFFSET ?")
        var starts: [Int64] = [Int64.min]
        for k in 1..<count {
            guard starts[k - 1] != Int64.max else { starts.append(Int64.max); continue }
            try nextStart.bind([.integer(starts[k - 1]), .integer(Int64(firsts[k] - firsts[k - 1]))])
            starts.append(try nextStart.step() ? nextStart.int64(0) : Int64.max)
            nextStart.reset()
        }
        self.live = live
        self.readers = readers
        parts = (0..<count).map { k in
            Part(positions: firsts[k]..<firsts[k + 1], firstRowid: starts[k],
                 lastRowid: k == count - 1 ? Int64.max : starts[k + 1] - 1)
        }
    }

    /// The ranges start-up would read in the file at `path` now, made on a read-only connection.
    public static func of(path: String) throws -> LiveRowRanges {
        let db = try Database(path: path, mode: .readOnly)
        return try LiveRowRanges(db, live: try liveCount(db), readers: nil)
    }

    /// Reads every part on `readers` threads at once (this one and others named `threadName`):
    /// each thread opens its reader once (`open`, which returns how it reads part `k`), then
    /// takes the next part not yet taken until none is left, so that no thread waits idle on
    /// another's share. What each part read gave, by part (nil: not read), and the first error
    /// met, after which no part is taken.
    public func readParts<T: Sendable>(threadName: String,
                                       open: @escaping @Sendable () throws -> (Int) throws -> T)
        -> (byPart: [T?], error: (any Error)?) {
        let dealer = PartDealer(count: parts.count)
        let threads = inParallel(named: threadName, (0..<readers).map { _ in
            { @Sendable () -> (read: [(part: Int, value: T)], error: (any Error)?) in
                var read: [(part: Int, value: T)] = []
                do {
                    let readPart = try open()
                    while let k = dealer.take() { read.append((k, try readPart(k))) }
                    return (read, nil)
                } catch {
                    dealer.stop()
                    return (read, error)
                }
            }
        })
        var byPart = [T?](repeating: nil, count: parts.count)
        for thread in threads { for (k, value) in thread.read { byPart[k] = value } }
        return (byPart, threads.lazy.compactMap(\.error).first)
    }
}

/// The next part not yet taken, for any thread.
private final class PartDealer: Sendable {
    private let next = Atomic<Int>(0)
    private let count: Int

    init(count: Int) { self.count = count }

    func take() -> Int? {
        let k = next.add(1, ordering: .relaxed).oldValue
        return k < count ? k : nil
    }

    /// No part is taken after this.
    func stop() { next.store(count, ordering: .relaxed) }
}
