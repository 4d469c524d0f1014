import Foundation
import JSON
import PostgresDB
import Synchronization
import Testing
@testable import LiveActivityMonitor

/// The PostgreSQL store (`PostgresEventStore`) on the private test cluster: the same state as
/// the SQLite store from the same events, rebuilt from its tables at start, idempotent, whole or
/// nothing, events partitioned by day. (The lock-screen vectors and the router tests run over it
/// too: `MonitorTier.postgres`.)
@Suite struct PostgresStoreTests {
    static let now = TestServer.base

    static func events(_ values: [JSONValue]) throws -> [Event] {
        try IngestDecoder().decode(Array(JSONValue.array(values).jsonString.utf8), format: .json)
    }

    static var scenarioIDs: [String] {
        Array(Set(Scenario.events.compactMap { $0["activity_id"]?.stringValue })).sorted()
    }

    /// What a store holds for `ids`: records, counters, each activity's stored events.
    static func snapshot(_ store: some MonitorStore, ids: [String]) throws -> (records: [ActivityRecord?], counters: MonitorCounters,
                                                                          events: [[String]]) {
        (try ids.map { try store.record($0) }, store.withLiveState { $0.counters },
         try ids.map { try store.storedEvents(activityID: $0).map(\.body) })
    }

    /// Makes PostgreSQL refuse the row of activity `id` (a trigger named `trigger` raising
    /// `sqlState`, or plpgsql's default P0001): a failure inside a commit, from the real server.
    static func refuseActivity(_ id: String, trigger: String, sqlState: String? = nil, _ admin: PostgresConnection) throws {
        let code = sqlState.map { " USING ERRCODE = '\($0)'" } ?? ""
        try admin.execute("""
            CREATE FUNCTION \(trigger)() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.activity_id = '\(id)' THEN RAISE EXCEPTION 'refused'\(code); END IF; RETURN NEW; END $$;
            CREATE TRIGGER \(trigger) BEFORE INSERT ON activities FOR EACH ROW EXECUTE FUNCTION \(trigger)();
            """)
    }

    @Test func theSameEventsLeadToTheSameStateAsInSQLite() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? TemporaryDirectory.remove(directory) }
        let (sqliteClock, sqliteTime) = Clock.manual(Self.now)
        let (postgresClock, postgresTime) = Clock.manual(Self.now)
        let sqlite = try EventStore(path: directory + "/db.sqlite", clock: sqliteClock)
        defer { sqlite.close() }
        let postgres = try PostgresEventStore(uri: try PostgresCluster.database(), clock: postgresClock)
        defer { postgres.close() }
        let events = try Self.events(Scenario.events)
        let summary = try postgres.ingest(events).get()
        #expect(summary == IngestSummary(accepted: 16))
        #expect(try sqlite.ingest(events).get() == summary)
        // Time alone (stale dates, the 8 h end) changes both alike.
        for hours in [1.0, 9, 13] {
            sqliteTime.set(Self.now + hours * 3600)
            postgresTime.set(Self.now + hours * 3600)
            sqlite.sweepIfDue()
            postgres.sweepIfDue()
            let a = try Self.snapshot(sqlite, ids: Self.scenarioIDs), b = try Self.snapshot(postgres, ids: Self.scenarioIDs)
            #expect(a.records == b.records, "after \(hours) h")
            #expect(a.counters == b.counters, "after \(hours) h")
            #expect(a.events == b.events)
        }
        #expect(try sqlite.storedEvents(bookingID: "BK-1042").map(\.body) == postgres.storedEvents(bookingID: "BK-1042").map(\.body))
    }

    @Test func aRestartRebuildsTheStateFromTheTables() throws {
        let uri = try PostgresCluster.database()
        let (clock, _) = Clock.manual(Self.now)
        let first = try PostgresEventStore(uri: uri, clock: clock)
        _ = try first.ingest(Self.events(Scenario.events)).get()
        let before = try Self.snapshot(first, ids: Self.scenarioIDs)
        let live = first.withLiveState { $0.records.count }
        first.close()

        let second = try PostgresEventStore(uri: uri, clock: clock)
        defer { second.close() }
        let after = try Self.snapshot(second, ids: Self.scenarioIDs)
        #expect(after.records == before.records)
        #expect(after.counters == before.counters)
        #expect(after.events == before.events)
        #expect(second.withLiveState { $0.records.count } == live)
        #expect(try second.ingest(Self.events(Scenario.events)).get() == IngestSummary(duplicates: 16))
    }

    @Test func duplicatesWithinAndAcrossRequestsAndConflicts() throws {
        let (clock, _) = Clock.manual(Self.now)
        let store = try PostgresEventStore(uri: try PostgresCluster.database(), clock: clock)
        defer { store.close() }
        let e1 = IngestTests.started("a", eventID: "e1")
        #expect(try store.ingest(Self.events([e1, e1])).get() == IngestSummary(accepted: 1, duplicates: 1))
        #expect(try store.ingest(Self.events([e1])).get() == IngestSummary(duplicates: 1))
        // Another event under a stored id: the stored one stays, and the answer says so.
        let other = IngestTests.started("b", eventID: "e1")
        #expect(try store.ingest(Self.events([other])).get() == IngestSummary(duplicates: 1, conflicts: 1))
        #expect(try store.record("b") == nil)
        #expect(try store.storedEvents(activityID: "a").count == 1)
    }

    @Test func aFailingCommitStoresNothingAndTheNextOneSucceeds() throws {
        let uri = try PostgresCluster.database()
        let (clock, _) = Clock.manual(Self.now)
        let store = try PostgresEventStore(uri: uri, clock: clock)
        defer { store.close() }
        let admin = try PostgresConnection(uri: uri)
        // A server-side failure in the middle of the commit, after the events' rows went in.
        try Self.refuseActivity("boom", trigger: "refuse_boom", admin)
        let batch = try Self.events([IngestTests.started("ok", eventID: "k-ok"), IngestTests.started("boom", eventID: "k-boom")])
        guard case .failure(let error) = store.ingest(batch) else {
            Issue.record("a commit the server refused was answered as stored")
            return
        }
        #expect(error.status == 503)
        #expect(error.message.contains("nothing from this request was stored"))
        // Not the server's DETAIL, which would quote the row.
        #expect(!error.message.contains("k-ok"))
        for table in ["events", "event_keys", "activities", "counters"] {
            #expect(try admin.scalar("SELECT count(*) FROM \(table)") == .integer(0), "\(table)")
        }
        #expect(try store.record("ok") == nil)
        #expect(store.withLiveState { $0.counters } == MonitorCounters())

        try admin.execute("DROP TRIGGER refuse_boom ON activities")
        // The keys of the refused request were not taken: the retry is accepted whole.
        #expect(try store.ingest(batch).get() == IngestSummary(accepted: 2))
        #expect(store.readinessProblem() == nil)
        #expect(try admin.scalar("SELECT count(*) FROM events") == .integer(2))
        #expect(try store.record("ok") != nil)
    }

    @Test func eventsArePartitionedByDayAndOldDaysAreDroppedWhole() throws {
        let uri = try PostgresCluster.database()
        let (clock, _) = Clock.manual(Self.now)
        let store = try PostgresEventStore(uri: uri, clock: clock)
        defer { store.close() }
        let day = PostgresEventPartitions.day(Self.now)
        let old = IngestTests.started("old", eventID: "k-old", at: Self.now - 2 * 86_400)
        let recent = IngestTests.started("recent", eventID: "k-recent", at: Self.now - 86_400)
        let today = IngestTests.started("today", eventID: "k-today", at: Self.now - 60)
        #expect(try store.ingest(Self.events([old, recent, today])).get().accepted == 3)
        let admin = try PostgresConnection(uri: uri)
        #expect(try PostgresEventPartitions.existing(admin) == [day - 2, day - 1, day])
        #expect(try admin.scalar("SELECT count(*) FROM \(PostgresEventPartitions.name(day - 2))") == .integer(1))

        #expect(try PostgresEventPartitions.drop(before: day - 1, admin) == [day - 2])
        #expect(try PostgresEventPartitions.existing(admin) == [day - 1, day])
        #expect(try admin.scalar("SELECT count(*) FROM events") == .integer(2))
        #expect(try admin.scalar("SELECT count(*) FROM event_keys WHERE event_id = 'k-old'") == .integer(0))
        #expect(try store.storedEvents(activityID: "old").isEmpty)
    }

    @Test func retentionDropsTheDaysOlderThanItsAge() throws {
        let uri = try PostgresCluster.database()
        let (clock, _) = Clock.manual(Self.now)
        let store = try PostgresEventStore(uri: uri, clock: clock)
        defer { store.close() }
        let old = IngestTests.started("old", eventID: "k-old", at: Self.now - 3 * 86_400)
        let today = IngestTests.started("today", eventID: "k-today", at: Self.now - 60)
        #expect(try store.ingest(Self.events([old, today])).get().accepted == 2)
        let lines = Mutex<[String]>([])
        let retention = PostgresRetention(uri: uri, password: nil, age: 86_400, interval: 3600, clock: clock,
                                          log: { line in lines.withLock { $0.append(line) } })
        #expect(retention.pass() == [PostgresEventPartitions.day(Self.now - 3 * 86_400)])
        #expect(retention.pass() == [])
        #expect(try store.storedEvents(activityID: "old").isEmpty)
        #expect(try store.storedEvents(activityID: "today").count == 1)
        #expect(lines.withLock { $0.count } == 1)
        // The dropped key is free again: the event is new to the store.
        #expect(try store.ingest(Self.events([old])).get().accepted == 1)
    }

    @Test func concurrentRequestsAreEachAnsweredOnceStored() throws {
        let uri = try PostgresCluster.database()
        let (clock, _) = Clock.manual(Self.now)
        let store = try PostgresEventStore(uri: uri, clock: clock)
        defer { store.close() }
        let answers = Mutex<[Result<IngestSummary, APIError>]>([])
        let done = DispatchSemaphore(value: 0)
        let requests = 60
        for i in 0..<requests {
            let events = try Self.events([IngestTests.started("c\(i)", eventID: "k\(i)"), IngestTests.started("c\(i)", eventID: "k\(i)")])
            store.ingest(events) { result in
                answers.withLock { $0.append(result) }
                done.signal()
            }
        }
        for _ in 0..<requests { done.wait() }
        let all = answers.withLock { $0 }
        #expect(all.count == requests)
        #expect(all.allSatisfy { (try? $0.get()) == IngestSummary(accepted: 1, duplicates: 1) })
        // Group commit: fewer commits than requests (most wait for the one before them).
        #expect(store.commitDurations.count <= UInt64(requests))
        let admin = try PostgresConnection(uri: uri)
        #expect(try admin.scalar("SELECT count(*) FROM events") == .integer(Int64(requests)))
        #expect(try admin.scalar("SELECT count(*) FROM activities") == .integer(Int64(requests)))
    }

    /// A value PostgreSQL will not take (a data exception, as U+0000 in text was) fails the
    /// request that holds it, not the other requests of its group commit: each is committed again
    /// alone. Before, every request that shared a commit with it got 503, for as long as its client
    /// retried it.
    @Test func aValuePostgreSQLRefusesFailsOnlyItsOwnRequest() throws {
        let uri = try PostgresCluster.database()
        let (clock, _) = Clock.manual(Self.now)
        let store = try PostgresEventStore(uri: uri, clock: clock)
        defer { store.close() }
        let admin = try PostgresConnection(uri: uri)
        try Self.refuseActivity("poison", trigger: "refuse_value", sqlState: "22023", admin)
        let answers = Mutex<[String: Result<IngestSummary, APIError>]>([:])
        let done = DispatchSemaphore(value: 0)
        let requests = 40, poisoned = 20
        for i in 0..<requests {
            let id = i == poisoned ? "poison" : "fine-\(i)"
            store.ingest(try Self.events([IngestTests.started(id, eventID: "k-" + id)])) { result in
                answers.withLock { $0[id] = result }
                done.signal()
            }
        }
        for _ in 0..<requests { done.wait() }
        let all = answers.withLock { $0 }
        #expect(all["poison"].map { if case .failure(let e) = $0 { e.status == 503 } else { false } } == true)
        let refused = all.filter { $0.key != "poison" && (try? $0.value.get()) != IngestSummary(accepted: 1) }.keys.sorted()
        #expect(refused.isEmpty, "refused beside the poisoned request: \(refused)")
        #expect(try admin.scalar("SELECT count(*) FROM activities") == .integer(Int64(requests - 1)))
        #expect(try store.ingest(try Self.events([IngestTests.started("after", eventID: "k-after")])).get() == IngestSummary(accepted: 1))
    }

    @Test func thePasswordFileIsReadOnceAndTrimmed() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? TemporaryDirectory.remove(directory) }
        try "  s3cret pass \n\nignored\n".write(toFile: directory + "/pw", atomically: true, encoding: .utf8)
        #expect(try PostgresStoreDatabase.password(fromFile: directory + "/pw") == "s3cret pass")
        #expect(PostgresStoreDatabase.isPostgresURI("postgres://u@h/db"))
        #expect(PostgresStoreDatabase.isPostgresURI("postgresql://u@h/db"))
        #expect(!PostgresStoreDatabase.isPostgresURI("/var/lib/monitor.sqlite"))
    }
}

extension PostgresStoreTests {
    /// The server closes every connection of the store (as a restart or an administrator
    /// would): the next request is stored on a new connection, and so is the next read.
    @Test func connectionsTheServerClosedAreOpenedAgain() throws {
        let uri = try PostgresCluster.database()
        let (clock, _) = Clock.manual(Self.now)
        let store = try PostgresEventStore(uri: uri, clock: clock)
        defer { store.close() }
        #expect(try store.ingest(Self.events([IngestTests.started("a", eventID: "k-a")])).get().accepted == 1)
        #expect(try store.storedEvents(activityID: "a").count == 1)
        let admin = try PostgresConnection(uri: uri)
        let closed = try admin.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
            """).rows.count
        #expect(closed >= 2)  // the writer and a reader
        #expect(try store.ingest(Self.events([IngestTests.started("b", eventID: "k-b")])).get().accepted == 1)
        #expect(try store.storedEvents(activityID: "b").count == 1)
        #expect(store.readinessProblem() == nil)
        #expect(try admin.scalar("SELECT count(*) FROM events") == .integer(2))
        #expect(store.withLiveState { $0.counters.counters[SeriesKey(MonitorMetrics.ingestEvents.name, ["activity.started"])] } == 2)
    }
}

extension PostgresStoreTests {
    /// Channels (created, subscribed, broadcast to, deleted, a broadcast after the delete): the
    /// same book, records, counters and channel history as SQLite, and the same after a restart.
    @Test func channelsAndBroadcastsAsInSQLite() throws {
        typealias B = BroadcastTests
        typealias C = ChannelTests
        let t = Self.now - 600
        let events = try Self.events([
            C.request("channel.created", B.channel, at: t, status: 201, policy: 1),
            C.request("channel.created", C.quiet, at: t + 1, status: 201, policy: 0),
            B.subscriber("s1", at: t + 2), B.subscriber("s2", at: t + 2),
            B.broadcast(at: t + 3, content: t + 3, id: "b1"),
            C.request("channel.deleted", B.channel, at: t + 4, status: 204),
            B.broadcast(at: t + 5, content: t + 5, id: "b2"),
        ])
        let directory = try TemporaryDirectory.make()
        defer { try? TemporaryDirectory.remove(directory) }
        let (sqliteClock, _) = Clock.manual(Self.now)
        let (postgresClock, _) = Clock.manual(Self.now)
        let sqlite = try EventStore(path: directory + "/db.sqlite", clock: sqliteClock)
        defer { sqlite.close() }
        let uri = try PostgresCluster.database()
        let postgres = try PostgresEventStore(uri: uri, clock: postgresClock)
        #expect(try postgres.ingest(events).get() == sqlite.ingest(events).get())
        let ids = ["s1", "s2"]
        func same(_ store: PostgresEventStore) throws {
            let a = try Self.snapshot(sqlite, ids: ids), b = try Self.snapshot(store, ids: ids)
            #expect(a.records == b.records)
            #expect(a.counters == b.counters)
            #expect(a.events == b.events)
            #expect(sqlite.withLiveState { $0.channels } == store.withLiveState { $0.channels })
            for channel in [B.channel, C.quiet] {
                #expect(try sqlite.storedEvents(channelID: channel, limit: 10).map(\.body)
                        == store.storedEvents(channelID: channel, limit: 10).map(\.body))
            }
        }
        try same(postgres)
        #expect(try postgres.storedEvents(channelID: B.channel, limit: 10).count == 4)
        postgres.close()
        let again = try PostgresEventStore(uri: uri, clock: postgresClock)
        defer { again.close() }
        try same(again)
    }
}
