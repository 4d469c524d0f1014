import Foundation
import JSON
import SQLiteDB
import Synchronization
import Testing
@testable import LiveActivityMonitor

/// Live activities' rows and the counters reach their tables about four times a second
/// (`DeferredWrites`); after a crash, start-up replays the events stored since. A crash is
/// imitated by a copy of the database as it is committed at one moment (`VACUUM INTO`, run
/// by the writer between two commits): what a killed server leaves behind.
@Suite(.serialized) struct ReplayTests {
    typealias State = (records: [ActivityRecord], counters: MonitorCounters)

    /// Every activity the store knows (live ones from memory, the rest from its table) and the counters.
    static func state(of store: EventStore, ids: [String]) throws -> State {
        (try ids.compactMap { try store.record($0) }, store.withState { $0.counters })
    }

    /// The database as committed now, copied to `path`, and the store's state at that moment.
    static func crashImage(of server: TestServer, to path: String, ids: [String]) throws -> State {
        let store = server.server.store
        let taken = Mutex<MonitorCounters?>(nil)
        let result = store.submit(.withConnection { db in
            try db.execute("VACUUM INTO '\(path)'")
            taken.withLock { $0 = store.withState { $0.counters } }
        })
        #expect(throws: Never.self) { try result.get() }
        let records = try ids.compactMap { try store.record($0) }
        return (records, try #require(taken.withLock { $0 }))
    }

    static func rowsBehind(_ server: TestServer, ids: [String]) throws -> [String] {
        let db = try Database(path: server.configuration.databasePath, mode: .readOnly)
        return try ids.filter { id in
            // As memory has it, with the texts it left to the row read back (they are the row's).
            guard server.server.store.withState({ $0.records[id] }) != nil,
                  let live = try server.server.store.record(id) else { return false }
            return try EventStore.loadRecord(id, from: db) != live
        }
    }

    /// Events with an activity not filed under it (`filed_activity_events`), and entries there
    /// without their event.
    static func filing(_ db: Database) throws -> (unfiled: Int64, orphans: Int64) {
        let unfiled = try db.scalar("""
            SELECT count(*) FROM events e WHERE activity_id IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM filed_activity_events a WHERE a.activity_id = e.activity_id AND a.seq = e.seq)
            """)
        // An entry under a number no row holds is not in the view: counted beside it.
        let orphans = try db.scalar("""
            SELECT (SELECT count(*) FROM filed_activity_events a
                    WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = a.seq AND e.activity_id = a.activity_id))
                 + (SELECT count(*) FROM activity_events_numbered n
                    WHERE NOT EXISTS (SELECT 1 FROM activities a WHERE a.number = n.number))
            """)
        return (unfiled?.int64Value ?? -1, orphans?.int64Value ?? -1)
    }

    /// Documents without the `received_at` the reader splices in: the stored bodies.
    static func stored(_ documents: [String]) -> [String] {
        documents.map { d in d.range(of: ",\"received_at\":").map { String(d[..<$0.lowerBound]) + "}" } ?? d }
    }

    /// An activity's or a booking's events by definition, scanning the table, in time order:
    /// those that name it, and the broadcasts its activities received (they name none).
    static func scannedHistory(_ db: Database, activity id: String) throws -> [String] {
        try db.query("""
            SELECT body FROM events NOT INDEXED
            WHERE activity_id = ?1 OR seq IN (SELECT seq FROM broadcast_receivers WHERE activity_id = ?1)
            ORDER BY occurred_at, seq
            """, [.text(id)]).map { $0[0].textValue ?? "" }
    }

    static func scannedHistory(_ db: Database, booking id: String) throws -> [String] {
        try db.query("""
            SELECT body FROM events NOT INDEXED
            WHERE booking_id = ?1 OR activity_id IN (SELECT activity_id FROM activities WHERE booking_id = ?1)
               OR seq IN (SELECT seq FROM broadcast_receivers
                          WHERE activity_id IN (SELECT activity_id FROM activities WHERE booking_id = ?1))
            ORDER BY occurred_at, seq
            """, [.text(id)]).map { $0[0].textValue ?? "" }
    }

    /// The scenario, then time passing (a stale date, an 8-hour end, a dismissal each fall due
    /// inside a later commit), one request at a time and in batches.
    static func post(_ server: TestServer) throws {
        for event in Scenario.events.prefix(6) {
            #expect(try server.post(events: [event]).status == 200)
            server.time.advance(by: 1)
        }
        server.server.store.catchUp()
        #expect(try server.post(events: Array(Scenario.events.dropFirst(6))).status == 200)
        let now = server.time.value
        let later: [JSONValue] = [
            JSONValue(["id": "l1", "type": "activity.started", "activity_id": "soon-stale", "booking_id": "BK-9",
                       "attributes_type": "LiveActivityAttributes", "occurred_at": now, "stale_date": now + 30,
                       "content_state": Scenario.ride(0.2, 8), "push_token": Scenario.tokenA] as [String: Any]),
            JSONValue(["id": "l2", "type": "activity.started", "activity_id": "eight-hours", "booking_id": "BK-9",
                       "attributes_type": "TimerWidgetAttributes", "occurred_at": now - 8 * 3600 + 40,
                       "content_state": ["startedAt": now]] as [String: Any]),
            JSONValue(["id": "l3", "type": "activity.ended", "activity_id": "ride-2", "occurred_at": now,
                       "dismissal_policy": "after", "dismissal_date": now + 50] as [String: Any]),
        ]
        for event in later {
            #expect(try server.post(events: [event]).status == 200)
        }
        #expect(try server.post(events: [Scenario.events[0]]).status == 200)   // a duplicate
        for step in 1...4 {
            server.time.advance(by: 20)
            let at = server.time.value
            #expect(try server.post(events: [Scenario.push("soon-stale", "u\(step)", at: at - 25, token: Scenario.tokenA,
                                                           content: Scenario.ride(0.2 + Double(step) / 10, 8 - step))]).status == 200)
        }
    }

    static let ids = ["ride-1", "ride-2", "timer-1", "ghost", "soon-stale", "eight-hours"]

    /// A server on the scenario's file (`post`), made an older version's by `rewind` while stopped.
    static func serverOnOlderFile(rewoundBy rewind: (Database) throws -> Void) throws -> TestServer {
        let first = try TestServer()
        try post(first)
        first.stop(keepFiles: true)
        try rewind(try Database(path: first.configuration.databasePath))
        return try TestServer(now: first.time.value, directory: first.directory)
    }

    @Test func aCrashBetweenCatchUpsOpensToTheStateTheServerHad() throws {
        let server = try TestServer { $0.catchUpInterval = 3600 }   // behind until told
        defer { server.stop() }
        try Self.post(server)
        let behind = try Self.rowsBehind(server, ids: Self.ids)
        #expect(!behind.isEmpty, "rows were left for a later commit")
        let metrics = MetricsText.dataOnly(try server.get("/metrics").text, keepHTTP: false)

        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let image = directory + "/monitor.sqlite"
        let expected = try Self.crashImage(of: server, to: image, ids: Self.ids)
        #expect(expected.records.count == Self.ids.count - 1, "every activity but the unknown one")

        let logged = Mutex<[String]>([])
        let (clock, _) = Clock.manual(server.time.value)
        let copy = try EventStore(path: image, clock: clock) { line in logged.withLock { $0.append(line) } }
        let replayed = try Self.state(of: copy, ids: Self.ids)
        copy.close()
        #expect(replayed.records == expected.records)
        #expect(replayed.counters == expected.counters)
        let filed = try Self.filing(try Database(path: image, mode: .readOnly))
        #expect(filed.unfiled == 0 && filed.orphans == 0, "replayed events are filed under their activities: \(filed)")
        #expect(logged.withLock { $0 }.contains { $0.contains("replayed") && !$0.contains("skipped") }, "\(logged.withLock { $0 })")

        // The replay brought the tables up to date: a second start replays nothing.
        logged.withLock { $0 = [] }
        let again = try TestServer(now: server.time.value, directory: directory) { c in
            c.log = { line in logged.withLock { $0.append(line) } }
        }
        defer { again.stop() }
        #expect(try Self.state(of: again.server.store, ids: Self.ids).records == expected.records)
        #expect(MetricsText.dataOnly(try again.get("/metrics").text, keepHTTP: false) == metrics)
        #expect(!logged.withLock { $0 }.contains { $0.contains("replayed") })
    }

    @Test func theTablesCatchUpOnTheirOwnAndAtStop() throws {
        let server = try TestServer { $0.catchUpInterval = 0.2 }
        defer { server.stop() }
        try Self.post(server)
        var waited = 0.0
        while try !Self.rowsBehind(server, ids: Self.ids).isEmpty, waited < 10 {
            Thread.sleep(forTimeInterval: 0.05)
            waited += 0.05
        }
        #expect(try Self.rowsBehind(server, ids: Self.ids).isEmpty, "caught up without another request")

        let slow = try TestServer { $0.catchUpInterval = 3600 }
        defer { slow.stop() }
        try Self.post(slow)
        #expect(try !Self.rowsBehind(slow, ids: Self.ids).isEmpty)
        let expected = try Self.state(of: slow.server.store, ids: Self.ids)
        slow.server.store.close()
        let db = try Database(path: slow.configuration.databasePath, mode: .readOnly)
        #expect(try Self.ids.compactMap { try EventStore.loadRecord($0, from: db) } == expected.records,
                "a clean stop leaves every row written")
        #expect(try db.scalar("SELECT applied_seq = (SELECT max(seq) FROM events) FROM store_state") == .integer(1))
        let filed = try Self.filing(db)
        #expect(filed.unfiled == 0 && filed.orphans == 0, "\(filed)")
    }

    /// Events are filed under their activities as the tables catch up; an activity's history includes
    /// the events stored since, before and after they are filed.
    @Test func anActivitysHistoryIncludesEventsNotYetFiled() throws {
        let server = try TestServer { $0.catchUpInterval = 3600 }
        defer { server.stop() }
        try Self.post(server)
        let db = try Database(path: server.configuration.databasePath, mode: .readOnly)
        #expect(try Self.filing(db).unfiled > 0, "some events are not filed yet")
        try Self.expectHistoriesMatchScan(server, "before the catch-up")
        server.server.store.catchUp()
        #expect(try Self.filing(db) == (0, 0))
        try Self.expectHistoriesMatchScan(server, "caught up")
    }

    /// The scenario's bookings (`post`).
    static let bookings = ["BK-1042", "BK-1043", "BK-2001", "BK-9"]

    /// Each activity's and booking's history from the store equals a scan of the events table.
    static func expectHistoriesMatchScan(_ server: TestServer, activities: [String] = ids, bookings: [String] = bookings,
                                         _ comment: String) throws {
        let db = try Database(path: server.configuration.databasePath, mode: .readOnly)
        let store = server.server.store
        for id in activities {
            #expect(try stored(store.eventDocuments(activityID: id)) == scannedHistory(db, activity: id), "\(comment): \(id)")
        }
        for id in bookings {
            #expect(try stored(store.eventDocuments(bookingID: id)) == scannedHistory(db, booking: id), "\(comment): \(id)")
        }
    }

    @Test func pruningTheNewestEventsLowersTheReplayMark() throws {
        let server = try TestServer()
        try Self.post(server)
        server.stop(keepFiles: true)
        defer { try? FileManager.default.removeItem(atPath: server.directory) }
        let db = try Retention.open(server.configuration.databasePath)
        let pruned = try Retention.prune(db, before: .infinity, batch: 7)
        #expect(pruned.events > 0)
        #expect(try db.scalar("SELECT count(*) FROM events") == .integer(0))
        // The next event is numbered 1 again: it must count as not yet applied.
        #expect(try db.scalar("SELECT applied_seq FROM store_state") == .integer(0))
        #expect(try db.scalar("SELECT (SELECT count(*) FROM activity_events) + (SELECT count(*) FROM activity_events_numbered)")
                == .integer(0), "entries go with their events")
    }
}
