import Foundation
import LiveActivityMonitor
import PostgresDB

/// The PostgreSQL storage limit: the rows the batched ingest stores (the same events, the store's
/// own schema and migrations, its partitions by day, its table of idempotency keys, and the days
/// of each activity and booking, filed by the writer's own statement), inserted through prepared
/// statements, 1000 rows per statement (one array parameter per column, as the store's writer
/// sends them) in transactions of the writer's commit size, with no HTTP, no parsing and no state.
final class PostgresStorageBaseline {
    /// `fill`'s transactions (untimed).
    static let fillRowsPerTransaction = 10_000
    static let rowsPerStatement = 1000
    private let db: PostgresConnection
    private let rows: [StorageBaseline.Row]
    /// Each row's partition (by the day it occurred).
    private let days: [Int64]
    private var round = 0

    /// `uri` names an empty database: the store's migrations make the schema.
    init(uri: String, events lines: [String]) throws {
        db = try PostgresStoreDatabase.open(uri: uri)
        rows = try StorageBaseline.rows(lines)
        days = rows.map { PostgresEventPartitions.day($0.occurredAt) }
        // Before any timing, as the writer makes them outside its transaction.
        try PostgresEventPartitions.ensure(Set(days), db)
    }

    /// Inserts `count` rows in transactions of `perTransaction` (the writer's mean commit it is
    /// compared with), taking the rows in turn (again from the first, under new event ids, when
    /// `count` is more than there are), and returns rows per second. Throws unless every row
    /// was stored under a key of its own (a key already taken would be skipped, as the
    /// store skips a duplicate, and the rate would count work not done).
    func insert(_ count: Int, perTransaction: Int) throws -> Double {
        let before = try storedRows()
        let (seconds, _) = try Stopwatch.time { try store(count, perTransaction: perTransaction) }
        let stored = try storedRows()
        guard stored.events - before.events == count, stored.keys - before.keys == count else {
            throw BenchError("PostgreSQL storage limit: \(stored.events - before.events) events and "
                             + "\(stored.keys - before.keys) keys stored of \(count)")
        }
        return Double(count) / seconds
    }

    /// Rows in the events table and in its table of keys (counted outside the timing).
    private func storedRows() throws -> (events: Int, keys: Int) {
        let row = try db.query("SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM event_keys)").rows.first
        return (Int(row?[0].int64Value ?? -1), Int(row?[1].int64Value ?? -1))
    }

    /// Inserts rows, untimed, until the database holds `events` events (none if it holds as
    /// many), as `StorageBaseline.fill(to:)`: the rounds compare equal sizes.
    func fill(to events: Int) throws {
        let held = try storedRows().events
        if events > held { try store(events - held, perTransaction: Self.fillRowsPerTransaction) }
    }

    /// `count` rows, a pass over the rows at a time under event ids no earlier pass used.
    private func store(_ count: Int, perTransaction: Int) throws {
        round += 1
        let now = Date().timeIntervalSince1970
        let step = max(perTransaction, 1)
        for pass in stride(from: 0, to: count, by: rows.count) {
            let prefix = "r\(round)-\(pass / rows.count)-", passRows = min(rows.count, count - pass)
            for start in stride(from: 0, to: passRows, by: step) {
                try db.transaction {
                    let end = min(start + step, passRows)
                    for chunk in stride(from: start, to: end, by: Self.rowsPerStatement) {
                        try insert(chunk..<min(chunk + Self.rowsPerStatement, end), prefix: prefix, now: now)
                    }
                }
            }
        }
    }

    private func insert(_ range: Range<Int>, prefix: String, now: Double) throws {
        let slice = rows[range]
        let seqs = try db.prepared("SELECT nextval('events_seq') FROM generate_series(1, $1::integer)",
                                   [.integer(Int64(slice.count))]).rows.map { $0[0] }
        let keyed = range.filter { rows[$0].key != nil }
        if !keyed.isEmpty {
            try db.prepared("""
                INSERT INTO event_keys (event_id, seq, day)
                SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[]) ON CONFLICT (event_id) DO NOTHING
                """, [try .array(keyed.map { .text(prefix + rows[$0].key!) }),
                      try .array(keyed.map { seqs[$0 - range.lowerBound] }),
                      try .array(keyed.map { .integer(days[$0]) })])
        }
        try db.prepared(PostgresEventDays.insertEventsSQL, [
                try .array(seqs), try .array(range.map { .integer(days[$0]) }),
                try .array(slice.map { PostgresValue($0.key.map { prefix + $0 }) }), try .array(slice.map { .text($0.type) }),
                try .array(slice.map { PostgresValue($0.activityID) }), try .array(slice.map { PostgresValue($0.bookingID) }),
                try .array(slice.map { .real($0.occurredAt) }), try .array(slice.map { _ in .real(now) }),
                try .array(slice.map { .text($0.body) }),
            ])
    }
}
