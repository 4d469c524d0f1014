import PostgresDB

/// The day partitions of `events`: `events_d<day>` holds the events that occurred on Unix day
/// `day` (UTC). The writer creates the ones a commit needs before it begins; retention drops
/// whole partitions, with the rows filed by day elsewhere (keys, verdicts, receivers, the days
/// of each activity and booking: `PostgresEventDays`). An event for a day retention is
/// dropping at that moment fails its commit (503; the client retries).
/// Public for the benchmark's storage limit.
public enum PostgresEventPartitions {
    static let secondsPerDay = 86_400.0

    /// The partition key of an event that occurred at `occurredAt` (Unix seconds).
    public static func day(_ occurredAt: Double) -> Int64 {
        Int64((occurredAt / secondsPerDay).rounded(.down))
    }

    /// The partition's name: built from a number, so it is safe in DDL (which takes no parameters).
    static func name(_ day: Int64) -> String {
        day < 0 ? "events_dm\(-day)" : "events_d\(day)"
    }

    /// The days that have a partition, oldest first.
    static func existing(_ db: PostgresConnection) throws -> [Int64] {
        try db.query("""
            SELECT c.relname FROM pg_inherits i
            JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'events'::regclass
            """).rows.compactMap { row in
            row.first?.textValue.flatMap(parse)
        }.sorted()
    }

    /// Creates the partitions of `days` that are missing, outside the writer's transaction
    /// (DDL on the parent takes a lock that readers wait for; a partition left empty by a
    /// commit that then failed does no harm). Asked of the database at each commit, not cached:
    /// retention drops partitions from another connection. One round trip when none is missing.
    public static func ensure(_ days: Set<Int64>, _ db: PostgresConnection) throws {
        guard !days.isEmpty else { return }
        let sorted = days.sorted()
        let missing = Set(try db.prepared("SELECT n FROM unnest($1::text[]) AS n WHERE to_regclass(n) IS NULL",
                                          [try .array(sorted.map { .text(name($0)) })]).rows.compactMap { $0[0].textValue })
        for day in sorted where missing.contains(name(day)) {
            try db.execute("CREATE TABLE IF NOT EXISTS \(name(day)) PARTITION OF events FOR VALUES FROM (\(day)) TO (\(day + 1))")
        }
    }

    /// Drops every partition of a day before `day`, and the rows filed by those days, in one
    /// transaction; returns the days dropped.
    @discardableResult
    static func drop(before day: Int64, _ db: PostgresConnection) throws -> [Int64] {
        let old = try existing(db).filter { $0 < day }
        guard !old.isEmpty else { return [] }
        try db.transaction {
            for d in old { try db.execute("DROP TABLE \(name(d))") }
            for table in ["event_keys", "event_verdicts", "broadcast_receivers", "broadcast_verdicts", "start_push_verdicts",
                          "channel_events"]
                + PostgresEventDays.tables {
                try db.query("DELETE FROM \(table) WHERE day < $1::integer", [.integer(day)])
            }
        }
        return old
    }

    private static func parse(_ name: String) -> Int64? {
        if name.hasPrefix("events_dm") { return Int64(name.dropFirst("events_dm".count)).map { -$0 } }
        if name.hasPrefix("events_d") { return Int64(name.dropFirst("events_d".count)) }
        return nil
    }
}
