import Foundation
import SQLiteDB

/// How start-up splits the live rows among its reader connections (`EventStore.liveRecords`):
/// part `k` holds the live rows from the (k × live / parts)-th on, in rowid order, and is read by
/// `selectSQL` with its rowid bounds. Public so that the benchmark reads exactly these rows with
/// SQLite alone, start-up's floor ("SQLite itself", Tests/bench/PERFORMANCE.md).
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

    static func liveCount(_ db: Database) throws -> Int {
        Int(try db.scalar("SELECT count(*) FROM activities WHERE dismissed_at IS NULL")?.int64Value ?? 0)
    }

    /// The `live` rows in `readers` parts (by default one per processor when there are enough
    /// rows): where each part's range of rowids starts is read from the `activities_live` index
    /// alone (a walk of its entries, a small part of the load).
    init(_ db: Database, live: Int, readers: Int?) throws {
        let count = max(1, readers ?? min(Self.loadReaders, live / Self.rowsPerLoadReader))
        let firsts = (0...count).map { $0 * live / count }
        var starts: [Int64] = [Int64.min]
        for k in 1..<count {
            let at = try db.scalar("SELECT rowid FROM activities WHERE dismissed_at IS NULL ORDER BY rowid LIMIT 1 OFFSET ?",
                                   [.integer(Int64(firsts[k]))])
            starts.append(at?.int64Value ?? Int64.max)
        }
        self.live = live
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
}
