import PostgresDB

/// One statement and the values bound to it: what a read runs (and what a test EXPLAINs).
struct PostgresStatement {
    let sql: String
    let parameters: [PostgresValue]
}

/// The reads of one activity's, one booking's or one channel's events (the leader's store, a
/// standby and `history` alike), each in two steps in one snapshot: first the days of the events
/// wanted (and the day and seq of those found by seq: broadcasts, a channel's events) from the
/// small tables filed by day (`PostgresEventDays`, `broadcast_receivers`, `channel_events`),
/// then `events` with those days bound as values (`day = ANY($n)`), so that the planner keeps
/// their partitions alone. A subquery in their place is planned and scanned over every day's
/// partition: a cost that grows with the days stored, not with the activity's events.
enum PostgresEventReads {
    /// The columns every read selects (`PostgresEventStore.rows` reads them by position): the
    /// event's, its verdict (`event_verdicts`), and a broadcast's verdicts per attributes type
    /// (`broadcast_verdicts`, a JSON array of `[type, detail]` as `StoredEventRow` reads it; null
    /// when none, and not looked up for an event that names an activity).
    static let columns = """
        SELECT body, received_at, occurred_at, seq, event_id, booking_id, activity_id,
               (SELECT detail FROM event_verdicts v WHERE v.seq = e.seq),
               CASE WHEN e.activity_id IS NULL THEN (SELECT json_agg(json_build_array(b.attributes_type, b.detail))::text
                                                     FROM broadcast_verdicts b WHERE b.seq = e.seq) END
        FROM events e
        """

    /// The days an activity's events are on (seq null), and each broadcast it received.
    static let activityDaysSQL = """
        SELECT day, NULL::bigint FROM activity_days WHERE activity_id = $1
        UNION ALL SELECT day, seq FROM broadcast_receivers WHERE activity_id = $1
        """

    /// A booking's activities (bound as values in the next steps: a subquery there would be
    /// joined by hash over every partition it keeps).
    static let bookingActivitiesSQL = "SELECT activity_id FROM activities WHERE booking_id = $1"

    /// The days of the events naming a booking (`$1`) and of its activities' (`$2`) events (seq
    /// null), and each broadcast its activities received.
    static let bookingDaysSQL = """
        SELECT day, NULL::bigint FROM booking_days WHERE booking_id = $1
        UNION ALL SELECT day, NULL FROM activity_days WHERE activity_id = ANY($2::text[])
        UNION ALL SELECT day, seq FROM broadcast_receivers WHERE activity_id = ANY($2::text[])
        """

    /// The newest `$2` events that name a channel and no activity.
    static let channelDaysSQL = "SELECT day, seq FROM channel_events WHERE channel_id = $1 ORDER BY seq DESC LIMIT $2::bigint"

    /// An activity's events and the broadcasts it received, in time order, ties in arrival order;
    /// nil when it has none.
    static func activity(_ activityID: String, _ db: PostgresConnection) throws -> PostgresStatement? {
        let found = FoundEvents(try db.prepared(activityDaysSQL, [.text(activityID)]))
        var events = EventsStatement()
        if !found.days.isEmpty {
            let days = try events.bind(days: found.days), id = events.bind(.text(activityID))
            events.add("day = ANY(\(days)) AND activity_id = \(id)")
        }
        try events.addBySeq(found)
        return events.statement(union: "UNION ALL")
    }

    /// A booking's events: those naming it and every event (and broadcast) of its activities, once
    /// each; nil when there is none.
    static func booking(_ bookingID: String, _ db: PostgresConnection) throws -> PostgresStatement? {
        let activities = try PostgresValue.array(db.prepared(bookingActivitiesSQL, [.text(bookingID)]).rows.map { $0[0] })
        let found = FoundEvents(try db.prepared(bookingDaysSQL, [.text(bookingID), activities]))
        var events = EventsStatement()
        if !found.days.isEmpty {
            let days = try events.bind(days: found.days), id = events.bind(.text(bookingID)), ids = events.bind(activities)
            events.add("day = ANY(\(days)) AND booking_id = \(id)")
            events.add("day = ANY(\(days)) AND activity_id = ANY(\(ids)::text[])")
        }
        try events.addBySeq(found)
        return events.statement(union: "UNION")
    }

    /// The newest `limit` events that name `channelID` and no activity, in time order; nil when
    /// there is none.
    static func channel(_ channelID: String, limit: Int, _ db: PostgresConnection) throws -> PostgresStatement? {
        var events = EventsStatement()
        try events.addBySeq(FoundEvents(try db.prepared(channelDaysSQL, [.text(channelID), .integer(Int64(limit))])))
        return events.statement(union: "UNION ALL")
    }

    /// The rows of the statement `read` builds (none when it builds none), both steps in one
    /// snapshot: a commit between them (a day filed after the first) cannot show half its
    /// events. Within a caller's transaction, in that one.
    static func events(_ db: PostgresConnection, _ read: (PostgresConnection) throws -> PostgresStatement?) throws -> [[PostgresValue]] {
        guard !db.isInTransaction else { return try run(read(db), db) }
        return try db.transaction {
            // JIT: a booking over many days is costed high enough to be compiled, which takes
            // seconds, for a read of milliseconds.
            try db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL jit = off")
            return try run(read(db), db)
        }
    }

    /// Planned for its values each time (an unnamed statement): a server-side prepared one turns
    /// to a generic plan after a few runs, and a generic plan holds every partition.
    private static func run(_ statement: PostgresStatement?, _ db: PostgresConnection) throws -> [[PostgresValue]] {
        guard let statement else { return [] }
        return try db.query(statement.sql, statement.parameters).rows
    }
}

/// What a read's first step found: rows of (day, seq), seq null for a day of events found by id.
private struct FoundEvents {
    var days: Set<Int64> = []
    var seqDays: Set<Int64> = []
    var seqs: [Int64] = []

    init(_ result: PostgresResult) {
        for row in result.rows {
            guard let day = row[0].int64Value else { continue }
            if let seq = row[1].int64Value {
                seqDays.insert(day)
                seqs.append(seq)
            } else {
                days.insert(day)
            }
        }
    }
}

/// The branches of a read over `events`, each value bound once and numbered in turn. A branch
/// with no day to read is left out rather than given an empty array: `day = ANY('{}')` prunes
/// no partition at plan time, so the planner would open every one.
private struct EventsStatement {
    private var branches: [String] = []
    private(set) var parameters: [PostgresValue] = []

    /// Binds `value`; returns its placeholder.
    mutating func bind(_ value: PostgresValue) -> String {
        parameters.append(value)
        return "$\(parameters.count)"
    }

    mutating func bind(days: Set<Int64>) throws -> String {
        bind(try .array(days.sorted().map { .integer($0) })) + "::integer[]"
    }

    mutating func add(_ condition: String) {
        branches.append(PostgresEventReads.columns + " WHERE " + condition)
    }

    /// The events `found` names by day and seq, if any.
    mutating func addBySeq(_ found: FoundEvents) throws {
        guard !found.seqs.isEmpty else { return }
        let days = try bind(days: found.seqDays), seqs = bind(try .array(found.seqs.map { .integer($0) }))
        add("day = ANY(\(days)) AND seq = ANY(\(seqs)::bigint[])")
    }

    /// The branches joined by `union`, in time order, ties in arrival order; nil without any.
    func statement(union: String) -> PostgresStatement? {
        guard !branches.isEmpty else { return nil }
        return PostgresStatement(sql: branches.joined(separator: " \(union) ") + " ORDER BY 3, 4", parameters: parameters)
    }
}
