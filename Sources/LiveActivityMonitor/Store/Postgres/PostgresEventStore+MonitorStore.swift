import PostgresDB
import Prometheus

/// The PostgreSQL store as the monitor's store: live state from memory, the rest from the
/// tables through the read connections.
extension PostgresEventStore: MonitorStore {
    func withLiveState<T>(_ body: (LiveState) -> T) -> T {
        state.withLock { body($0.live) }
    }

    func record(_ activityID: String) throws -> ActivityRecord? {
        if let live = state.withLock({ $0.records[activityID] }) { return live }
        return try readers.read { try PostgresStateLoader.record(activityID, $0) }
    }

    func records(bookingID: String) throws -> [ActivityRecord] {
        let stored = try readers.read { try Self.records(bookingID: bookingID, $0) }
        return state.withLock { s in stored.map { s.records[$0.activityID] ?? $0 } }
    }

    /// A booking's activities as the tables hold them, in start order (also what a standby
    /// reads, and `history`, which reads without a store).
    static func records(bookingID: String, _ db: PostgresConnection) throws -> [ActivityRecord] {
        try db.prepared(ActivityRecord.postgresSelectSQL + " WHERE booking_id = $1 ORDER BY started_at, activity_id",
                        [.text(bookingID)]).rows.map(ActivityRecord.init(postgresRow:))
    }

    func dismissedRecords(limit: Int, after: (startedAt: Double, activityID: String)?,
                          matching: (ActivityRecord) -> Bool) throws -> [ActivityRecord] {
        try Self.dismissedRecords(limit: limit, after: after, matching: matching, readers)
    }

    /// Dismissed activities from the tables (also what a standby reads): pages along
    /// `activities_dismissed` until `limit` match (a filter may skip many).
    static func dismissedRecords(limit: Int, after: (startedAt: Double, activityID: String)?,
                                 matching: (ActivityRecord) -> Bool, _ readers: PostgresConnectionPool) throws -> [ActivityRecord] {
        var out: [ActivityRecord] = []
        var cursor = (startedAt: after?.startedAt ?? .infinity, activityID: after?.activityID ?? "")
        let page = max(limit, 100)
        while out.count < limit {
            let rows = try readers.read { db in
                try db.prepared(ActivityRecord.postgresSelectSQL + """
                     WHERE dismissed_at IS NOT NULL AND started_at <= $1::float8
                       AND (started_at < $1::float8 OR activity_id > $2::text)
                     ORDER BY started_at DESC, activity_id LIMIT $3::bigint
                    """, [.real(cursor.startedAt), .text(cursor.activityID), .integer(Int64(page))]).rows
            }
            for row in rows {
                let record = ActivityRecord(postgresRow: row)
                cursor = (record.startedAt, record.activityID)
                if matching(record) { out.append(record) }
                if out.count == limit { break }
            }
            if rows.count < page { break }
        }
        return out
    }

    func storedEvents(activityID: String) throws -> [StoredEventRow] {
        try readers.read { try Self.storedEvents(activityID: activityID, $0) }
    }

    func storedEvents(bookingID: String) throws -> [StoredEventRow] {
        try readers.read { try Self.storedEvents(bookingID: bookingID, $0) }
    }

    func storedEvents(channelID: String, limit: Int) throws -> [StoredEventRow] {
        try readers.read { try Self.storedEvents(channelID: channelID, limit: limit, $0) }
    }

    /// An activity's events and the broadcasts it received, in time order, ties in arrival order
    /// (also what a standby reads, and `history`).
    static func storedEvents(activityID: String, _ db: PostgresConnection) throws -> [StoredEventRow] {
        rows(try PostgresEventReads.events(db) { try PostgresEventReads.activity(activityID, $0) })
    }

    /// A booking's events: those naming it and every event (and broadcast) of its activities, once
    /// each (also what a standby reads, and `history`).
    static func storedEvents(bookingID: String, _ db: PostgresConnection) throws -> [StoredEventRow] {
        rows(try PostgresEventReads.events(db) { try PostgresEventReads.booking(bookingID, $0) })
    }

    /// The newest `limit` events that name `channelID` and no activity, in time order (also
    /// what a standby reads).
    static func storedEvents(channelID: String, limit: Int, _ db: PostgresConnection) throws -> [StoredEventRow] {
        rows(try PostgresEventReads.events(db) { try PostgresEventReads.channel(channelID, limit: limit, $0) })
    }

    func judgedSuperseded(among rows: [StoredEventRow]) throws -> Set<Int64> {
        guard !rows.isEmpty else { return [] }
        return try readers.read { try Self.judgedSuperseded(among: rows, $0) }
    }

    static func judgedSuperseded(among rows: [StoredEventRow], _ db: PostgresConnection) throws -> Set<Int64> {
        Set(try db.prepared("SELECT seq FROM start_push_verdicts WHERE seq = ANY($1::bigint[])",
                            [try .array(rows.map { .integer($0.seq) })]).rows.compactMap { $0[0].int64Value })
    }

    var sizeBytes: Int64 {
        let size = try? readers.read { try $0.prepared("SELECT pg_database_size(current_database())").scalar?.int64Value }
        return (size ?? nil) ?? 0
    }

    var commitDurations: HistogramValue { commitSeconds.withLock { $0 } }
    var evictedActivities: Int { evicted.load(ordering: .relaxed) }

    /// The rows of a statement selecting `PostgresEventReads.columns`.
    private static func rows(_ rows: [[PostgresValue]]) -> [StoredEventRow] {
        rows.map { r in
            StoredEventRow(seq: r[3].int64Value ?? 0, body: r[0].textValue ?? "{}", receivedAt: r[1].doubleValue ?? 0,
                           occurredAt: r[2].doubleValue ?? 0, key: r[4].textValue, bookingID: r[5].textValue,
                           activityID: r[6].textValue, verdict: r[7].textValue, broadcastVerdicts: r[8].textValue)
        }
    }
}
