import PostgresDB
import SQLiteDB

/// One table `migrate` copies from SQLite to PostgreSQL, row by row: the same rows, column for
/// column, so that the PostgreSQL store loads the state the SQLite store had (no event is judged
/// again). Tables filed by event carry its day in PostgreSQL (`PostgresSchema`): the SQLite
/// query selects the event's `occurred_at` there, turned into its day by the partitions' rule.
struct MigratedTable: Sendable {
    /// The PostgreSQL table (`PostgresSchema`), rows inserted in batches.
    let name: String
    /// Selects the rows from the SQLite file, one value per column of `columns`, in order.
    let select: String
    let columns: [String]
    /// Each column's PostgreSQL type (the parameters are arrays of it, read back by `unnest`).
    let types: [String]
    /// The column that holds an `occurred_at` in `select` and a day in PostgreSQL, if any.
    var dayColumn: Int? = nil
    /// A verdict's detail, written as today's store writes it: a store from before verdicts
    /// escaped control characters holds a content key's raw U+0000, which PostgreSQL's text refuses.
    var verdictColumn: Int? = nil

    var insertSQL: String {
        let arrays = types.enumerated().map { "$\($0.offset + 1)::\($0.element)[]" }.joined(separator: ", ")
        return "INSERT INTO \(name) (\(columns.joined(separator: ", "))) SELECT * FROM unnest(\(arrays))"
    }

    /// A row read from SQLite, as PostgreSQL parameters.
    func values(_ row: [SQLiteValue]) -> [PostgresValue] {
        row.enumerated().map { i, value in
            if i == dayColumn, case .real(let at) = value { return .integer(PostgresEventPartitions.day(at)) }
            if i == dayColumn, case .integer(let at) = value { return .integer(PostgresEventPartitions.day(Double(at))) }
            switch value {
            case .null: return .null
            case .integer(let n): return .integer(n)
            case .real(let x): return .real(x)
            case .text(let s): return .text(i == verdictColumn ? ObjectShape.printable(s) : s)
            case .blob(let b): return .bytes(b)
            }
        }
    }

    /// Every table but `activities` (copied as records: `SQLiteToPostgres`), events first. Not
    /// copied: SQLite's `activity_events` and `store_state`, which PostgreSQL does without (an
    /// index on `events`; tables current at every commit).
    static let all: [MigratedTable] = [
        MigratedTable(name: "events",
                      select: "SELECT seq, occurred_at, event_id, type, activity_id, booking_id, occurred_at, received_at, body FROM events ORDER BY seq",
                      columns: ["seq", "day", "event_id", "type", "activity_id", "booking_id", "occurred_at", "received_at", "body"],
                      types: ["bigint", "integer", "text", "text", "text", "text", "float8", "float8", "text"], dayColumn: 1),
        MigratedTable(name: "event_keys",
                      select: "SELECT event_id, seq, occurred_at FROM events WHERE event_id IS NOT NULL ORDER BY seq",
                      columns: ["event_id", "seq", "day"], types: ["text", "bigint", "integer"], dayColumn: 2),
        MigratedTable(name: "event_verdicts",
                      select: "SELECT v.seq, e.occurred_at, v.detail FROM event_verdicts v JOIN events e ON e.seq = v.seq ORDER BY v.seq",
                      columns: ["seq", "day", "detail"], types: ["bigint", "integer", "text"], dayColumn: 1,
                      verdictColumn: 2),
        MigratedTable(name: "broadcast_receivers",
                      select: "SELECT r.activity_id, r.seq, e.occurred_at FROM broadcast_receivers r JOIN events e ON e.seq = r.seq ORDER BY r.seq",
                      columns: ["activity_id", "seq", "day"], types: ["text", "bigint", "integer"], dayColumn: 2),
        MigratedTable(name: "broadcast_verdicts",
                      select: """
                          SELECT b.seq, e.occurred_at, b.attributes_type, b.detail FROM broadcast_verdicts b
                          JOIN events e ON e.seq = b.seq ORDER BY b.seq, b.attributes_type
                          """,
                      columns: ["seq", "day", "attributes_type", "detail"], types: ["bigint", "integer", "text", "text"],
                      dayColumn: 1, verdictColumn: 3),
        MigratedTable(name: "channel_events",
                      select: "SELECT c.channel_id, c.seq, e.occurred_at FROM channel_events c JOIN events e ON e.seq = c.seq ORDER BY c.seq",
                      columns: ["channel_id", "seq", "day"], types: ["text", "bigint", "integer"], dayColumn: 2),
        MigratedTable(name: "start_push_verdicts",
                      select: "SELECT s.seq, e.occurred_at, s.why FROM start_push_verdicts s JOIN events e ON e.seq = s.seq ORDER BY s.seq",
                      columns: ["seq", "day", "why"], types: ["bigint", "integer", "text"], dayColumn: 1),
        MigratedTable(name: "counters", select: "SELECT key, value, histogram FROM counters",
                      columns: ["key", "value", "histogram"], types: ["text", "float8", "text"]),
        MigratedTable(name: "content_shapes", select: "SELECT attributes_type, shape FROM content_shapes",
                      columns: ["attributes_type", "shape"], types: ["text", "text"]),
        MigratedTable(name: "channels",
                      select: "SELECT channel_id, storage_policy, created_at, created_seq, deleted_at, deleted_seq, last_broadcast FROM channels",
                      columns: ["channel_id", "storage_policy", "created_at", "created_seq", "deleted_at", "deleted_seq", "last_broadcast"],
                      types: ["text", "bigint", "float8", "bigint", "float8", "bigint", "text"]),
        MigratedTable(name: "pending_start_pushes",
                      select: "SELECT seq, booking_id, attributes_type, sent_at, deadline FROM pending_start_pushes",
                      columns: ["seq", "booking_id", "attributes_type", "sent_at", "deadline"],
                      types: ["bigint", "text", "text", "float8", "float8"]),
        MigratedTable(name: "unstarted_start_pushes",
                      select: "SELECT seq, booking_id, attributes_type, sent_at, deadline FROM unstarted_start_pushes",
                      columns: ["seq", "booking_id", "attributes_type", "sent_at", "deadline"],
                      types: ["bigint", "text", "text", "float8", "float8"]),
        MigratedTable(name: "push_to_start_tokens",
                      select: "SELECT device_id, attributes_type, fingerprint, at FROM push_to_start_tokens",
                      columns: ["device_id", "attributes_type", "fingerprint", "at"], types: ["text", "text", "text", "float8"]),
        MigratedTable(name: "superseded_push_to_start_tokens", select: "SELECT fingerprint FROM superseded_push_to_start_tokens",
                      columns: ["fingerprint"], types: ["text"]),
    ]
}
