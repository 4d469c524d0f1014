import Foundation
import JSON
import LiveActivityMonitor
import LiveActivityWire
import SQLiteDB
import Prometheus

/// The storage limit: the rows the batched ingest stores (same events, same table, same
/// indexes, same `journal_mode=WAL`, `synchronous`, cache, checkpoint interval and background
/// checkpointer), inserted through one prepared statement in transactions of the writer's
/// commit size and filed under their activities as often as the writer files them, with no
/// HTTP, no parsing and no state. With `newActivities`, each start also inserts its activity's
/// row, as the store does for an activity new to it.
final class StorageBaseline {
    struct Row {
        var key: String?
        var type: String
        var activityID: String?
        var bookingID: String?
        var occurredAt: Double
        var body: String
        /// A start's (for its activity's row, `newActivities`).
        var attributesType: String?
    }

    /// `fill`'s transactions (untimed).
    static let fillRowsPerTransaction = 10_000
    private let path: String
    private let db: Database
    private let rows: [Row]
    private let newActivities: Bool
    private var round = 0

    /// Creates the schema by opening (and closing) an `EventStore` at `path` when the file is new:
    /// the real migrations. `events` are decoded and normalised by the real decoder before any
    /// timing. `newActivities`: each `activity.started` row also inserts a row into `activities`,
    /// a copy of a live one of its attributes type already in the file under the event's ids
    /// (the activities must be new to the file).
    convenience init(path: String, durability: Durability, events lines: [String], newActivities: Bool = false) throws {
        try self.init(path: path, durability: durability, rows: Self.rows(lines), newActivities: newActivities)
    }

    /// The same with `rows` already decoded (`rows(_:)`), for a limit made again each round.
    init(path: String, durability: Durability, rows: [Row], newActivities: Bool = false) throws {
        if !FileManager.default.fileExists(atPath: path) { try EventStore(path: path, durability: durability).close() }
        self.path = path
        self.newActivities = newActivities
        db = try Database(path: path)
        try db.execute("PRAGMA journal_mode = WAL")
        try db.execute("PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
        // The monitor's writer settings: the same cache and checkpoint interval.
        try EventStore.tuneWriter(db)
        self.rows = rows
    }

    /// The rows the server would store for `lines`: decoded and normalised by the real decoder.
    static func rows(_ lines: [String]) throws -> [Row] {
        var rows: [Row] = []
        rows.reserveCapacity(lines.count)
        let decoder = IngestDecoder()
        var bookings: [String: String] = [:]
        for chunk in stride(from: 0, to: lines.count, by: 1000) {
            let body = Array(lines[chunk..<min(chunk + 1000, lines.count)].joined(separator: "\n").utf8)
            for event in try decoder.decode(body, format: .ndjson) {
                // The server inherits the booking from the activity into the stored body of an
                // event that names none (the column keeps only a booking the client gave); store
                // the same here: the start's among these lines, else the throughput set's ("w" +
                // "BK" + the activity's number).
                var body = event.body
                if let id = event.activityID {
                    if let booking = event.bookingID {
                        bookings[id] = booking
                    } else {
                        body = EventStore.body(body, inheriting: bookings[id] ?? "w" + "BK" + id.drop(while: { !$0.isNumber }))
                    }
                }
                rows.append(Row(key: event.key, type: event.type.rawValue, activityID: event.activityID,
                                bookingID: event.bookingID, occurredAt: event.occurredAt, body: body,
                                attributesType: event.attributesType))
            }
        }
        return rows
    }

    var count: Int { rows.count }

    /// One `insertAll`: its rows, wall time and CPU, each thread's on its own.
    struct Measurement {
        /// Rows stored (every row, or `insertAll` throws).
        var rows: Int
        var seconds: Double
        /// The inserting thread's CPU: its statements, its commits and the short automatic
        /// checkpoints in them, as the monitor's writer thread does.
        var cpuSeconds: Double
        /// The background checkpointer's thread, beside it (the monitor's writer has one too).
        var checkpointerCPUSeconds: Double

        var rowsPerSecond: Double { Double(rows) / seconds }
        var cpuMicrosecondsPerRow: Double { cpuSeconds / Double(rows) * 1e6 }
        var checkpointerCPUMicrosecondsPerRow: Double { checkpointerCPUSeconds / Double(rows) * 1e6 }
    }

    /// Inserts every row once more (under new event ids): `insert` of all of them.
    func insertAll(perTransaction: Int) throws -> Measurement { try insert(rows.count, perTransaction: perTransaction) }

    /// Inserts `count` rows in transactions of `perTransaction` (the size of the writer's commits
    /// it is compared with: SQLite's cost per row depends on it), taking the rows in turn (again
    /// from the first, under new event ids, when `count` is more than there are), timed. Throws
    /// unless every row was stored:
    /// `INSERT OR IGNORE` into a file that already holds these ids stores nothing, and times
    /// only the lookups (the stages phase once reused the throughput phase's file so: 4.3 µs a
    /// row, no row written; PERFORMANCE.md, session 21).
    func insert(_ count: Int, perTransaction: Int) throws -> Measurement {
        let checkpointersBefore = ThreadCPU.threads(of: getpid(), named: "checkpointer")
        // The monitor's store copies its log into the file on another thread: so does this.
        let checkpointer = try Checkpointer(path: path)
        defer { checkpointer.stop() }
        let rowsBefore = try storedRows()
        let cpuBefore = Stopwatch.cpu(CLOCK_THREAD_CPUTIME_ID)
        let (seconds, _) = try Stopwatch.time { try store(count, perTransaction: perTransaction) }
        let cpu = Stopwatch.cpu(CLOCK_THREAD_CPUTIME_ID) - cpuBefore
        let checkpointerCPU = ThreadCPU.used(from: checkpointersBefore, to: ThreadCPU.threads(of: getpid(), named: "checkpointer"))
        let stored = try storedRows() - rowsBefore
        guard stored == count else {
            throw BenchError("storage limit: \(stored) of \(count) rows stored (\(path) already held their ids)")
        }
        return Measurement(rows: stored, seconds: seconds, cpuSeconds: cpu, checkpointerCPUSeconds: checkpointerCPU)
    }

    /// Inserts rows, untimed, until the file holds `events` events (none if it holds as many):
    /// SQLite's cost per row grows with its file, so a measurement compared with the monitor's
    /// starts from the size the monitor's file had.
    func fill(to events: Int) throws {
        let missing = events - (try storedRows())
        if missing > 0 { try store(missing, perTransaction: Self.fillRowsPerTransaction) }
    }

    /// `count` rows, in transactions of `perTransaction`, under event ids no earlier call used.
    private func store(_ count: Int, perTransaction: Int) throws {
        // A second pass would start each activity again: its row exists.
        guard !newActivities || count <= rows.count else { throw BenchError("storage limit: new activities once only") }
        round += 1
        let insert = try db.prepare("""
            INSERT OR IGNORE INTO events (event_id, type, activity_id, booking_id, occurred_at, received_at, body,
                                          booking_in_row)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let now = Date().timeIntervalSince1970
        let activityRow = newActivities ? try ActivityRowCopier(db) : nil
        // The activities the events since the last filing name, as the store's writer notes them.
        var named = Set<ExactString>()
        var unfiled = 0
        let step = max(perTransaction, 1)
        for start in stride(from: 0, to: count, by: step) {
            let end = min(start + step, count)
            var startedActivity = false
            try db.transaction(.immediate) {
                for n in start..<end {
                    let row = rows[n % rows.count]
                    try insert.bind(row.key.map { "r\(round)-\(n / rows.count)-" + $0 }, at: 1)
                    try insert.bind(row.type, at: 2)
                    try insert.bind(row.activityID, at: 3)
                    try insert.bind(row.bookingID, at: 4)
                    try insert.bind(row.occurredAt, at: 5)
                    try insert.bind(now, at: 6)
                    try insert.bind(row.body, at: 7)
                    // A start whose booking its new row holds is found through the row, as the
                    // store's (`CommitChanges.bookingInRow`).
                    let startsRow = activityRow != nil && row.type == EventType.activityStarted.rawValue
                    try insert.bind(startsRow && row.bookingID != nil ? SQLiteValue.integer(1) : .null, at: 8)
                    _ = try insert.step()
                    insert.reset()
                    if let id = row.activityID { named.insert(ExactString(id)) }
                    if let activityRow, startsRow, let id = row.activityID {
                        try activityRow.insert(id, booking: row.bookingID, like: row.attributesType)
                        startedActivity = true
                    }
                }
                // The events' index by activity, filed when the writer files it: in a commit that
                // starts an activity, once `eventsPerCatchUp` events wait, and after the last.
                // (Filing every 500-row transaction cost SQLite 8.0 µs a row against 3.5: the
                // writer's own cadence, not the baseline's, sets this cost.)
                unfiled += end - start
                if startedActivity || unfiled >= EventStore.eventsPerCatchUp || end == count {
                    try EventStore.advanceAppliedSeq(db, named: named)
                    named = []
                    unfiled = 0
                }
            }
        }
    }

    /// Rows in the events table (counted outside the timed loop, which stays the same).
    private func storedRows() throws -> Int {
        Int(try db.scalar("SELECT count(*) FROM events")?.int64Value ?? 0)
    }
}

/// Inserts activity rows as copies of a live row of the same attributes type already in the
/// file (the first of each type, read once), under new ids: a row as wide as the store writes,
/// less `held_record`, whose copy would name the other row's booking (without it, start-up
/// reads the row from its columns, as it reads an older version's). The copied `number` is
/// replaced by the insert's trigger, as for the store's rows (Schema, migration 16).
private final class ActivityRowCopier {
    private let db: Database
    private let columns: [String]
    private var templates: [String: [SQLiteValue]] = [:]
    private let insert: Statement

    init(_ db: Database) throws {
        self.db = db
        columns = try db.query("SELECT name FROM pragma_table_info('activities') ORDER BY cid").compactMap { $0[0].textValue }
        insert = try db.prepare("INSERT INTO activities (\(columns.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")")
    }

    func insert(_ id: String, booking: String?, like attributesType: String?) throws {
        let type = attributesType ?? ""
        if templates[type] == nil {
            let row = try db.query("SELECT * FROM activities WHERE attributes_type = ? AND dismissed_at IS NULL LIMIT 1", [.text(type)]).first
                ?? db.query("SELECT * FROM activities WHERE dismissed_at IS NULL LIMIT 1").first
            guard let row else { throw BenchError("storage limit: no live activity in the file to copy a row from") }
            templates[type] = row
        }
        for (i, (column, value)) in zip(columns, templates[type]!).enumerated() {
            let at = Int32(i + 1)
            switch column {
            case "activity_id": try insert.bind(id, at: at)
            case "booking_id": try insert.bind(booking, at: at)
            case "held_record": try insert.bindNull(at: at)
            default: try insert.bind(value, at: at)
            }
        }
        _ = try insert.step()
        insert.reset()
    }
}
