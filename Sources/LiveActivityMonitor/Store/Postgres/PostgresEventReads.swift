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
    /// The columns every read selects (`PostgresEventStore.rows` reads them by position).
    static let columns = """
        SELECT body, received_at, occurred_at, seq, event_id, booking_id, activity_id,
               (SELECT detail FROM event_verdicts v WHERE v.seq = e.seq) FROM events e
        """

    /// The days an activity's events are on (seq null), and each broadcast it received.
    static let activityDaysSQL = """
        SELECT day, NULL::bigint FROM activity_days WHERE activity_id = $1
        UNION ALL SELECT day, seq FROM broadcast_receivers WHERE activity_id = $1
        """

    /// The days of the events naming a booking and of its activities' events (seq null), and each
    /// broadcast its activities received. Ids compared in the default collation, as the indexes
    /// of the tables filed by day hold them (`activities` sorts by bytes).
    static let bookingDaysSQL = """
        WITH ids AS (SELECT activity_id COLLATE "default" AS id FROM activities WHERE booking_id = $1)
        SELECT day, NULL::bigint FROM booking_days WHERE booking_id = $1
        UNION ALL SELECT day, NULL FROM activity_days WHERE activity_id IN (SELECT id FROM ids)
        UNION ALL SELECT day, seq FROM broadcast_receivers WHERE activity_id IN (SELECT id FROM ids)
        """

    /// The newest `$2` events that name a channel and no activity.
    static let channelDaysSQL = "SELECT day, seq FROM channel_events WHERE channel_id = $1 ORDER BY seq DESC LIMIT $2::bigint"

    /// An activity's events and the broadcasts it received, in time order, ties in arrival order.
    static func activity(_ activityID: String, _ db: PostgresConnection) throws -> PostgresStatement {
        let found = FoundEvents(try db.prepared(activityDaysSQL, [.text(activityID)]))
        return PostgresStatement(
            sql: columns + " WHERE day = ANY($2::integer[]) AND activity_id = $1 UNION ALL "
                + columns + " WHERE day = ANY($3::integer[]) AND seq = ANY($4::bigint[]) ORDER BY 3, 4",
            parameters: [.text(activityID)] + (try found.parameters()))
    }

    /// A booking's events: those naming it and every event (and broadcast) of its activities, once each.
    static func booking(_ bookingID: String, _ db: PostgresConnection) throws -> PostgresStatement {
        let found = FoundEvents(try db.prepared(bookingDaysSQL, [.text(bookingID)]))
        return PostgresStatement(
            sql: columns + " WHERE day = ANY($2::integer[]) AND booking_id = $1 UNION "
                + columns + " WHERE day = ANY($2::integer[]) AND activity_id IN "
                + "(SELECT activity_id COLLATE \"default\" FROM activities WHERE booking_id = $1) UNION "
                + columns + " WHERE day = ANY($3::integer[]) AND seq = ANY($4::bigint[]) ORDER BY 3, 4",
            parameters: [.text(bookingID)] + (try found.parameters()))
    }

    /// The newest `limit` events that name `channelID` and no activity, in time order.
    static func channel(_ channelID: String, limit: Int, _ db: PostgresConnection) throws -> PostgresStatement {
        let found = FoundEvents(try db.prepared(channelDaysSQL, [.text(channelID), .integer(Int64(limit))]))
        return PostgresStatement(sql: columns + " WHERE day = ANY($1::integer[]) AND seq = ANY($2::bigint[]) ORDER BY 3, 4",
                                 parameters: Array(try found.parameters().dropFirst()))
    }

    /// The rows of the statement `read` builds, both steps in one snapshot: a commit between them
    /// (a day filed after the first) cannot show half its events. Within a caller's transaction,
    /// in that one.
    static func events(_ db: PostgresConnection, _ read: (PostgresConnection) throws -> PostgresStatement) throws -> PostgresResult {
        guard !db.isInTransaction else { return try run(read(db), db) }
        return try db.transaction {
            try db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try run(read(db), db)
        }
    }

    /// Planned for its values each time (an unnamed statement): a server-side prepared one turns
    /// to a generic plan after a few runs, and a generic plan holds every partition.
    private static func run(_ statement: PostgresStatement, _ db: PostgresConnection) throws -> PostgresResult {
        try db.query(statement.sql, statement.parameters)
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

    /// The days by id, the days by seq and the seqs, as array parameters.
    func parameters() throws -> [PostgresValue] {
        [try .array(days.sorted().map { .integer($0) }), try .array(seqDays.sorted().map { .integer($0) }),
         try .array(seqs.map { .integer($0) })]
    }
}
