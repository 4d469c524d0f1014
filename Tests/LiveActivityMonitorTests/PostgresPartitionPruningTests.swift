import JSON
import PostgresDB
import Testing
@testable import LiveActivityMonitor

/// One activity's, one booking's and one channel's events are read over the day partitions of
/// `events` that hold them, not over every day's: with a year of partitions, the plans of the
/// statements the store runs (`PostgresEventReads`) name only those days' partitions, and the
/// answers are SQLite's. (Before, every read planned and scanned each partition: seconds a read
/// at a thousand days.)
@Suite struct PostgresPartitionPruningTests {
    static let now = TestServer.base
    static let day = 86_400.0
    /// The day the ride starts on, at 23:00: its broadcast comes after midnight, on the next day.
    static let rideStart = Double(PostgresEventPartitions.day(now) - 300) * day + 23 * 3600

    typealias B = BroadcastTests
    typealias P = DeliveryAndPushToStartTests

    /// A year of days with one activity each, and a ride whose events, its booking's and its
    /// channel's fall on days of their own.
    static func events() throws -> [Event] {
        let filler = (0..<360).map { IngestTests.started("old-\($0)", at: now - Double($0 + 10) * day) }
        let t = rideStart
        return try PostgresStoreTests.events(filler + [
            ChannelTests.request("channel.created", B.channel, at: t - 3 * day, status: 201, policy: 1),
            P.startPush("BK-ride", at: t - 2 * day),
            B.subscriber("ride", at: t),
            B.broadcast(at: t + 2 * 3600, content: t + 2 * 3600, id: "b1"),
            P.update("ride", at: t + 5 * day, progress: 0.5),
        ])
    }

    /// The partitions of the days `offsets` after the ride's start.
    static func partitions(_ offsets: [Double]) -> Set<String> {
        Set(offsets.map { PostgresEventPartitions.name(PostgresEventPartitions.day(rideStart + $0 * day)) })
    }

    @Test func readsPlanOnlyThePartitionsOfTheirDays() throws {
        let uri = try PostgresCluster.database()
        let (clock, _) = Clock.manual(Self.now)
        let store = try PostgresEventStore(uri: uri, clock: clock)
        defer { store.close() }
        let events = try Self.events()
        #expect(try store.ingest(events).get().accepted == events.count)
        let db = try PostgresConnection(uri: uri)
        #expect(try PostgresEventPartitions.existing(db).count >= 360)

        // The ride's own days (start, late update) and its broadcast's, the next day.
        #expect(try Self.scanned(PostgresEventReads.activity("ride", db), db) == Self.partitions([0, 0.125, 5]))
        // Those and the start push naming the booking alone.
        #expect(try Self.scanned(PostgresEventReads.booking("BK-ride", db), db) == Self.partitions([-2, 0, 0.125, 5]))
        // Its creation and its broadcast.
        #expect(try Self.scanned(PostgresEventReads.channel(B.channel, limit: 10, db), db) == Self.partitions([-3, 0.125]))
        // No broadcast received: no branch by seq, whose empty array would have every partition planned.
        #expect(try Self.scanned(PostgresEventReads.activity("old-7", db), db)
                == [PostgresEventPartitions.name(PostgresEventPartitions.day(Self.now - 17 * Self.day))])
        #expect(try PostgresEventReads.activity("nobody", db) == nil)
        // The first steps read the small tables alone.
        for (sql, parameters) in [(PostgresEventReads.activityDaysSQL, [PostgresValue.text("ride")]),
                                  (PostgresEventReads.bookingActivitiesSQL, [.text("BK-ride")]),
                                  (PostgresEventReads.bookingDaysSQL, [.text("BK-ride"), try .array([.text("ride")])]),
                                  (PostgresEventReads.channelDaysSQL, [.text(B.channel), .integer(10)])] {
            #expect(try Self.scanned(PostgresStatement(sql: sql, parameters: parameters), db).isEmpty)
        }
        try Self.expectSameAnswersAsSQLite(events, postgres: store)
    }

    /// Retention drops a day's rows of the days tables with its partition.
    @Test func droppedDaysLeaveTheDaysTables() throws {
        let uri = try PostgresCluster.database()
        let (clock, _) = Clock.manual(Self.now)
        let store = try PostgresEventStore(uri: uri, clock: clock)
        defer { store.close() }
        _ = try store.ingest(Self.events()).get()
        let db = try PostgresConnection(uri: uri)
        let cut = PostgresEventPartitions.day(Self.rideStart)
        try PostgresEventPartitions.drop(before: cut, db)
        for table in PostgresEventDays.tables {
            #expect(try db.scalar("SELECT count(*) FROM \(table) WHERE day < $1::integer", [.integer(cut)]) == .integer(0))
        }
        #expect(try Self.scanned(PostgresEventReads.booking("BK-ride", db), db) == Self.partitions([0, 0.125, 5]))
        #expect(try store.storedEvents(bookingID: "BK-ride").count == 3)
    }

    /// The schema step that adds the days tables fills them from the events already stored.
    @Test func theSchemaStepFillsTheDaysOfStoredEvents() throws {
        let db = try PostgresConnection(uri: try PostgresCluster.database())
        try db.migrate(Array(PostgresSchema.migrations.prefix(3)))
        try PostgresEventPartitions.ensure([10, 11], db)
        try db.query("""
            INSERT INTO events (seq, day, type, activity_id, booking_id, occurred_at, received_at, body)
            SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::text[], $5::text[], $6::float8[],
                                 $7::float8[], $8::text[])
            """, [try .array([.integer(1), .integer(2), .integer(3)]), try .array([.integer(10), .integer(11), .integer(11)]),
                  try .array([.text("activity.started"), .text("push.sent"), .text("push.sent")]),
                  try .array([.text("a"), .text("a"), .null]), try .array([.text("BK"), .null, .text("BK")]),
                  try .array([.real(864_000), .real(950_400), .real(950_401)]),
                  try .array([.real(1e9), .real(1e9), .real(1e9)]), try .array([.text("{}"), .text("{}"), .text("{}")])])
        try db.migrate(PostgresSchema.migrations)
        #expect(try db.query("SELECT activity_id, day FROM activity_days ORDER BY 1, 2").rows == [[.text("a"), .integer(10)], [.text("a"), .integer(11)]])
        #expect(try db.query("SELECT booking_id, day FROM booking_days ORDER BY 1, 2").rows == [[.text("BK"), .integer(10)], [.text("BK"), .integer(11)]])
    }

    /// The same reads over SQLite from the same events.
    static func expectSameAnswersAsSQLite(_ events: [Event], postgres: PostgresEventStore) throws {
        let directory = try TemporaryDirectory.make()
        defer { try? TemporaryDirectory.remove(directory) }
        let (clock, _) = Clock.manual(Self.now)
        let sqlite = try EventStore(path: directory + "/db.sqlite", clock: clock)
        defer { sqlite.close() }
        _ = try sqlite.ingest(events).get()
        func answer(_ rows: [StoredEventRow]) -> [String] { rows.map { "\($0.occurredAt) \($0.body) \($0.verdict ?? "-")" } }
        for id in ["ride", "old-7", "nobody"] {
            #expect(answer(try postgres.storedEvents(activityID: id)) == answer(try sqlite.storedEvents(activityID: id)), "\(id)")
        }
        let ride = try postgres.storedEvents(activityID: "ride")
        #expect(ride.count == 3)  // start, broadcast received, update
        for id in ["BK-ride", "BK-old-7"] {
            #expect(answer(try postgres.storedEvents(bookingID: id)) == answer(try sqlite.storedEvents(bookingID: id)), "\(id)")
        }
        #expect(answer(try postgres.storedEvents(channelID: B.channel, limit: 10))
                == answer(try sqlite.storedEvents(channelID: B.channel, limit: 10)))
    }

    /// The `events` partitions the plan of `statement` reads, and those its planning opened (it
    /// locks each one it does not prune at once): planned for its values, as the store runs it.
    static func scanned(_ statement: PostgresStatement?, _ db: PostgresConnection) throws -> Set<String> {
        guard let statement else { return [] }
        return try db.transaction {
            let plan = try db.query("EXPLAIN (FORMAT JSON) " + statement.sql, statement.parameters).scalar?.textValue ?? ""
            let opened = try db.query("""
                SELECT c.relname FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                WHERE l.pid = pg_backend_pid() AND c.relkind = 'r' AND c.relname LIKE 'events\\_d%'
                """).rows.compactMap { $0[0].textValue }
            return relations(in: try JSONParser.parse(plan)).filter { $0.hasPrefix("events_d") }.union(opened)
        }
    }

    private static func relations(in value: JSONValue) -> Set<String> {
        switch value {
        case .object(let o):
            return o.reduce(into: Set(o["Relation Name"]?.stringValue.map { [$0] } ?? [])) { $0.formUnion(relations(in: $1.value)) }
        case .array(let a):
            return a.reduce(into: []) { $0.formUnion(relations(in: $1)) }
        default:
            return []
        }
    }
}
