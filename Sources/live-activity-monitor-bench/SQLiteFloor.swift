import CSQLite3
import Foundation
import LiveActivityMonitor

/// "SQLite itself": start-up's live rows read by SQLite alone, the floor of its load. The same
/// SELECT over the same row ranges, dealt to as many threads as start-up's readers in the same
/// way (`LiveRowRanges.readParts`: the calling thread among them, a connection each); every
/// row stepped and every column read by its storage class with the plain C calls (int64,
/// double, a blob's pointer and length), no Swift object per row.
enum SQLiteFloor {
    struct Reading {
        /// From opening the file (the count and the ranges included) until every part is read.
        let wallSeconds: Double
        /// The bench process's user + system time meanwhile.
        let cpuSeconds: Double
        let rows: Int
    }

    /// Reads the live rows of the file at `path` in `ranges` (by default made now, and timed
    /// with the rest); throws unless it read exactly as many rows as were live.
    static func read(path: String, ranges given: LiveRowRanges? = nil) throws -> Reading {
        let cpuBefore = ThreadCPU.process(getpid())
        let start = Stopwatch.now()
        let ranges = try given ?? LiveRowRanges.of(path: path)
        let read = ranges.readParts(threadName: "floor-load") {
            let reader = try PartReader(path: path)
            return { k in try reader.read(ranges.parts[k]) }
        }
        let elapsed = Stopwatch.now() - start
        let cpu = ThreadCPU.process(getpid()) - cpuBefore
        if let error = read.error { throw error }
        let total = read.byPart.reduce(0) { $0 + ($1 ?? 0) }
        guard total == ranges.live else { throw BenchError("SQLite itself: read \(total) rows of \(ranges.live) live") }
        return Reading(wallSeconds: elapsed, cpuSeconds: cpu, rows: total)
    }
}

/// One thread's connection and statement, kept for every part it is dealt.
private final class PartReader {
    private var db: OpaquePointer?
    private var statement: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            throw BenchError("SQLite itself: cannot open \(path)")
        }
        // As the store's connections (SQLiteDB's `Database`): a reader that meets another
        // connection's lock on the log waits for it instead of failing ("database is locked").
        sqlite3_busy_timeout(db, 5_000)
        guard sqlite3_prepare_v2(db, LiveRowRanges.selectSQL, -1, &statement, nil) == SQLITE_OK else { throw failure() }
    }

    deinit {
        sqlite3_finalize(statement)
        sqlite3_close_v2(db)
    }

    private func failure() -> BenchError { BenchError("SQLite itself: " + String(cString: sqlite3_errmsg(db))) }

    /// The rows of `part`, each column read: how many.
    func read(_ part: LiveRowRanges.Part) throws -> Int {
        sqlite3_reset(statement)
        guard sqlite3_bind_int64(statement, 1, part.firstRowid) == SQLITE_OK,
              sqlite3_bind_int64(statement, 2, part.lastRowid) == SQLITE_OK else { throw failure() }
        let columns = sqlite3_column_count(statement)
        var rows = 0, sum: UInt64 = 0
        var stepped = sqlite3_step(statement)
        while stepped == SQLITE_ROW {
            rows += 1
            for c in 0..<columns {
                switch sqlite3_column_type(statement, c) {
                case SQLITE_INTEGER: sum &+= UInt64(bitPattern: sqlite3_column_int64(statement, c))
                case SQLITE_FLOAT: sum &+= sqlite3_column_double(statement, c).bitPattern
                case SQLITE_TEXT, SQLITE_BLOB:
                    // The pointer first: the length then counts the bytes as they are.
                    let bytes = sqlite3_column_blob(statement, c)
                    sum &+= UInt64(sqlite3_column_bytes(statement, c)) &+ UInt64(UInt(bitPattern: bytes))
                default: break
                }
            }
            stepped = sqlite3_step(statement)
        }
        guard stepped == SQLITE_DONE else { throw failure() }
        // Kept, so that no read can be dropped as unused.
        withExtendedLifetime(sum) {}
        return rows
    }
}
