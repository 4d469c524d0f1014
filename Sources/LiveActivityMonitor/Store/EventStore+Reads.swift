import Foundation
import JSON
import SQLiteDB

/// The read side: memory for live activities, read-only connections for history.
extension EventStore {
    /// Runs `body` on the in-memory state under its lock; keep it short.
    func withState<T>(_ body: (MonitorState) -> T) -> T {
        state.withLock { body($0) }
    }

    /// One activity, live or not, or nil if never seen; whole: with its texts and its known
    /// contents read back from its row (no page shows those; the stores are compared by this,
    /// and a PostgreSQL record keeps them). Like the texts, the row may be newer than the copy
    /// by the commits since: then the known contents of those appear twice (never shown).
    public func record(_ activityID: String) throws -> ActivityRecord? {
        if let live = state.withLock({ $0.records[activityID] }) {
            var records = [live]
            try fillTexts(&records)
            if live.delivery.knownInRow {
                let row = try readers.read { try Self.storedKnown(of: activityID, $0) }
                records[0].delivery.takeBack(row: row)
            }
            return records[0]
        }
        return try readers.read { try Self.loadRecord(activityID, from: $0) }
    }

    /// Every activity of a booking, in start order, with their texts: its rows, each live one as
    /// memory holds it, whose texts let go are read again after the copy (the rows read before
    /// it may be older than what memory let go).
    public func records(bookingID: String) throws -> [ActivityRecord] {
        let stored = try readers.read { db in
            let s = try db.cached(ActivityRecord.selectSQL + " WHERE booking_id = ? ORDER BY started_at, activity_id")
            defer { s.reset() }
            try s.bind(bookingID, at: 1)
            var out: [ActivityRecord] = []
            while try s.step() { out.append(try ActivityRecord(row: s)) }
            return out
        }
        var records = state.withLock { s in stored.map { s.records[$0.activityID] ?? $0 } }
        try fillTexts(&records)
        return records
    }

    /// Dismissed activities after `after` (start time, id) in list order, newest start first and
    /// ties by id, up to `limit` of those `matching` (they are not kept in memory).
    func dismissedRecords(limit: Int, after: (startedAt: Double, activityID: String)?,
                          matching: (ActivityRecord) -> Bool) throws -> [ActivityRecord] {
        try readers.read { db in
            let s = try db.cached(ActivityRecord.selectSQL + """
                 WHERE dismissed_at IS NOT NULL AND started_at <= ?1 AND (started_at < ?1 OR activity_id > ?2)
                 ORDER BY started_at DESC, activity_id
                """)
            defer { s.reset() }
            try s.bind(after?.startedAt ?? .infinity, at: 1)
            try s.bind(after?.activityID ?? "", at: 2)
            // Stepped lazily along `activities_dismissed`: a filter reads on until the page is full.
            var out: [ActivityRecord] = []
            while out.count < limit, try s.step() {
                let record = try ActivityRecord(row: s)
                if matching(record) { out.append(record) }
            }
            return out
        }
    }

    /// Stored events (as JSON object texts with `received_at`) in `occurred_at` order, ties in arrival order.
    public func eventDocuments(activityID: String) throws -> [String] {
        try storedEvents(activityID: activityID).map(\.document)
    }

    public func eventDocuments(bookingID: String) throws -> [String] {
        try storedEvents(bookingID: bookingID).map(\.document)
    }

    /// An activity's stored events, in `occurred_at` order, ties in arrival order.
    func storedEvents(activityID: String) throws -> [StoredEventRow] {
        try storedEvents(sql: Self.activityEventsSQL, value: activityID)
    }

    /// A booking's stored events, in `occurred_at` order, ties in arrival order.
    func storedEvents(bookingID: String) throws -> [StoredEventRow] {
        try storedEvents(sql: Self.bookingEventsSQL, value: bookingID)
    }

    /// The last columns every read of events selects (`rows(of:)` reads them by position), after
    /// the event's own: the verdict stored with it (`event_verdicts`), and a broadcast's verdicts
    /// per attributes type (`broadcast_verdicts`, as `StoredEventRow.broadcastVerdicts` reads
    /// them; null when none, and not looked up for an event that names an activity).
    static let verdictColumns = """
        (SELECT detail FROM event_verdicts v WHERE v.seq = events.seq),
               CASE WHEN activity_id IS NULL THEN (SELECT nullif(json_group_array(json_array(b.attributes_type, b.detail)), '[]')
                                                   FROM broadcast_verdicts b WHERE b.seq = events.seq) END
        """

    /// An activity's events: those filed (`filed_activity_events`, up to `applied_seq`), and the few
    /// stored since, at most a quarter second's or `DeferredWrites.maxEvents`, found by scanning them
    /// (NOT INDEXED: by their numbers; the planner would rather walk `events_by_occurred_at`
    /// whole to save the sort).
    static let activityEventsSQL = """
        SELECT body, received_at, occurred_at, seq, event_id, booking_id, activity_id,
               \(verdictColumns) FROM events
        WHERE seq IN (SELECT seq FROM filed_activity_events WHERE activity_id = ?1)
        UNION ALL
        SELECT body, received_at, occurred_at, seq, event_id, booking_id, activity_id,
               \(verdictColumns) FROM events
        WHERE seq IN (SELECT seq FROM broadcast_receivers WHERE activity_id = ?1)
        UNION ALL
        SELECT body, received_at, occurred_at, seq, event_id, booking_id, activity_id,
               \(verdictColumns) FROM events NOT INDEXED
        WHERE seq > (SELECT applied_seq FROM store_state) AND activity_id = ?1
        ORDER BY occurred_at, seq
        """

    /// Each row also carries the verdicts stored with the event (`verdictColumns`), which the
    /// replay honours.
    /// A booking's events (`body`, `received_at`, …), in time order: those that name the booking,
    /// and every event of the booking's activities (which inherit it without naming it, or name
    /// it as their row does: `booking_in_row`, which `events_by_booking` leaves out), once each.
    static let bookingEventsSQL = """
        SELECT body, received_at, occurred_at, seq, event_id, booking_id, activity_id,
               \(verdictColumns) FROM events
        WHERE booking_id = ?1 AND booking_in_row IS NULL
        UNION
        SELECT body, received_at, occurred_at, seq, event_id, booking_id, activity_id,
               \(verdictColumns) FROM events
        WHERE seq IN (SELECT seq FROM filed_activity_events
                      WHERE activity_id IN (SELECT activity_id FROM activities WHERE booking_id = ?1))
        UNION
        SELECT body, received_at, occurred_at, seq, event_id, booking_id, activity_id,
               \(verdictColumns) FROM events
        WHERE seq IN (SELECT seq FROM broadcast_receivers
                      WHERE activity_id IN (SELECT activity_id FROM activities WHERE booking_id = ?1))
        UNION
        SELECT body, received_at, occurred_at, seq, event_id, booking_id, activity_id,
               \(verdictColumns) FROM events NOT INDEXED
        WHERE seq > (SELECT applied_seq FROM store_state)
          AND activity_id IN (SELECT activity_id FROM activities WHERE booking_id = ?1)
        ORDER BY occurred_at, seq
        """

    func storedEvents(channelID: String, limit: Int) throws -> [StoredEventRow] {
        try readers.read { db in
            let s = try db.cached("""
                SELECT body, received_at, occurred_at, seq, event_id, booking_id, activity_id,
                       \(Self.verdictColumns) FROM events
                WHERE seq IN (SELECT seq FROM channel_events WHERE channel_id = ?1 ORDER BY seq DESC LIMIT ?2)
                ORDER BY occurred_at, seq
                """)
            defer { s.reset() }
            try s.bind(channelID, at: 1)
            try s.bind(Int64(limit), at: 2)
            return try Self.rows(of: s)
        }
    }

    private func storedEvents(sql: String, value: String) throws -> [StoredEventRow] {
        try readers.read { try Self.storedEvents(sql: sql, value: value, in: $0) }
    }

    /// The rows `sql` (one of the two above) selects for `value`, from `db` (also `history`'s).
    static func storedEvents(sql: String, value: String, in db: Database) throws -> [StoredEventRow] {
        let s = try db.cached(sql)
        defer { s.reset() }
        try s.bind(value, at: 1)
        return try rows(of: s)
    }

    /// The rows a statement selecting the read columns (`activityEventsSQL`'s) steps through.
    private static func rows(of s: Statement) throws -> [StoredEventRow] {
        var out: [StoredEventRow] = []
        while try s.step() {
            out.append(StoredEventRow(seq: s.int64(3), body: s.text(0) ?? "{}", receivedAt: s.double(1),
                                      occurredAt: s.double(2), key: s.text(4), bookingID: s.text(5), activityID: s.text(6),
                                      verdict: s.text(7), broadcastVerdicts: s.text(8)))
        }
        return out
    }

    /// True when the database is open and the last write succeeded.
    public var isWritable: Bool { writeFailure.withLock { $0 == nil } }

    /// Size of the database file and its WAL.
    public var sizeBytes: Int64 {
        [path, path + "-wal"].reduce(0) { total, file in
            var st = stat()
            return stat(file, &st) == 0 ? total + Int64(st.st_size) : total
        }
    }
}
