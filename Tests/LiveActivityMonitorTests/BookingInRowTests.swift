import Foundation
import JSON
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// An event that names the booking its activity's live row holds (most starts) is found through
/// that row, as the activity's other events are: `events.booking_in_row` is set, and
/// `events_by_booking` leaves it out (Schema, migration 17). Every booking's history stays the
/// events that name it or belong to its activities.
@Suite(.serialized) struct BookingInRowTests {
    /// The events whose booking is left to their row: each one's id (or type), in arrival order.
    static func inRow(_ db: Database) throws -> [String] {
        try db.query("SELECT coalesce(event_id, type) FROM events WHERE booking_in_row IS NOT NULL ORDER BY seq")
            .map { $0[0].textValue ?? "" }
    }

    static func push(_ id: String, _ key: String, booking: String, at t: Double) -> JSONValue {
        Scenario.push(id, key, at: t, token: IngestTests.token, extra: ["booking_id": booking])
    }

    @Test func onlyEventsNamingTheirLiveRowsBookingAreLeftToIt() throws {
        let server = try TestServer()
        defer { server.stop() }
        let t = server.time.value
        let shape = ContentShapeTests.delivery
        let posted = try server.post(events: [
            IngestTests.started("a", eventID: "start-a", at: t - 50),
            Self.push("a", "same", booking: "BK-a", at: t - 40),
            Self.push("a", "other", booking: "BK-x", at: t - 39),
            // A second start under another booking: the row keeps the first.
            JSONValue(["id": "restart-a", "type": "activity.started", "activity_id": "a", "booking_id": "BK-y",
                       "attributes_type": "TimerWidgetAttributes", "occurred_at": t - 38,
                       "content_state": ["startedAt": t - 38]] as [String: Any]),
            // Before its start: no row holds the booking yet.
            Self.push("b", "early-b", booking: "BK-b", at: t - 37),
            IngestTests.started("b", eventID: "start-b", at: t - 36),
            // The type's shape, then a push-to-start whose content it would not decode: it
            // starts nothing, so its booking is indexed after all.
            ContentShapeTests.start("shaped", type: shape, content: ContentShapeTests.first),
            Scenario.push("never", "pts-bad", at: t - 35, event: "start", token: IngestTests.token,
                          content: ["eta": "soon"], extra: ["booking_id": "BK-never", "attributes_type": shape]),
        ])
        #expect(posted.status == 200, "\(posted.text)")
        // Ended and dismissed at once: a later event naming its booking is indexed.
        #expect(try server.post(events: [
            JSONValue(["id": "end-b", "type": "activity.ended", "activity_id": "b", "booking_id": "BK-b",
                       "occurred_at": t - 30, "dismissal_policy": "immediate"] as [String: Any]),
        ]).status == 200)
        #expect(try server.post(events: [Self.push("b", "after-b", booking: "BK-b", at: t - 20)]).status == 200)
        server.server.store.catchUp()

        let db = try Database(path: server.configuration.databasePath, mode: .readOnly)
        #expect(try Self.inRow(db) == ["start-a", "same", "start-b", "activity.started", "end-b"])
        #expect(try db.scalar("SELECT booking_in_row FROM events WHERE event_id = 'pts-bad'") == .null)
        try ReplayTests.expectHistoriesMatchScan(server, activities: ["a", "b", "never"],
                                                 bookings: ["BK-a", "BK-x", "BK-y", "BK-b", "BK-never", "BK-shaped"], "live")
        #expect(try server.server.store.eventDocuments(bookingID: "BK-b").count == 4)
        let filing = try ReplayTests.filing(db)
        #expect(filing.unfiled == 0 && filing.orphans == 0, "\(filing)")
    }

    /// A row's delete (retention) gives its events their index entries back: found by the
    /// booking they name without the row.
    @Test func aDeletedRowsEventsAreIndexedAgain() throws {
        let server = try TestServer()
        defer { server.stop() }
        let t = server.time.value
        #expect(try server.post(events: [IngestTests.started("gone", eventID: "start-gone", at: t - 50),
                                         Self.push("gone", "named", booking: "BK-gone", at: t - 40)]).status == 200)
        server.server.store.catchUp()
        let db = try Database(path: server.configuration.databasePath)
        #expect(try Self.inRow(db) == ["start-gone", "named"])
        try db.run("DELETE FROM activities WHERE activity_id = 'gone'")
        #expect(try Self.inRow(db) == [])
        let found = try EventStore.storedEvents(sql: EventStore.bookingEventsSQL, value: "BK-gone", in: db)
        #expect(found.map(\.key) == ["start-gone", "named"])
    }

    /// A file from before the column: its index holds every booking given; the upgrade
    /// rebuilds it without the column's events (none yet) and new starts are left to their rows.
    @Test func anOlderFileUpgradesAndLeavesNewStartsToTheirRows() throws {
        let server = try ReplayTests.serverOnOlderFile(rewoundBy: Self.rewindToBeforeBookingInRow)
        defer { server.stop() }
        let db = try Database(path: server.configuration.databasePath, mode: .readOnly)
        #expect(try db.userVersion == Schema.migrations.count)
        #expect(try Self.inRow(db) == [])
        try ReplayTests.expectHistoriesMatchScan(server, "upgraded")
        #expect(try server.post(events: [IngestTests.started("late-1", eventID: "start-late", at: server.time.value)]).status == 200)
        server.server.store.catchUp()
        #expect(try Self.inRow(db) == ["start-late"])
        try ReplayTests.expectHistoriesMatchScan(server, bookings: ReplayTests.bookings + ["BK-late-1"], "after a start")
    }

    /// Events left to their row whose activity has no row holding their booking: none may be,
    /// or a lookup by that booking would miss them.
    static func strays(_ db: Database) throws -> Int64 {
        try db.scalar("""
            SELECT count(*) FROM events e WHERE booking_in_row IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM activities a WHERE a.activity_id = e.activity_id AND a.booking_id = e.booking_id)
            """)?.int64Value ?? -1
    }

    /// The demo's traffic (every device event names its booking; rides end and leave the lock
    /// screen), then retention: every booking's lookup equals a scan of the events table before
    /// and after, and no event is left to a row that does not hold its booking.
    @Test func demoTrafficLookupsMatchAScanBeforeAndAfterPruning() throws {
        let start = DemoTrafficTests.start
        let first = try TestServer(now: start)
        var scenario = DemoTrafficTests.scenario(rate: 60, maxLive: 150)
        var t = start
        while t < start + 1200 {
            t += 30
            let events = scenario.events(until: t).map(JSONValue.object)
            first.time.set(t)
            if !events.isEmpty { #expect(try first.post(events: events).status == 200) }
        }
        first.server.store.catchUp()
        let path = first.configuration.databasePath
        let db = try Database(path: path, mode: .readOnly)
        let all = try db.query("SELECT DISTINCT booking_id FROM activities").compactMap { $0[0].textValue }
        // A quarter of the bookings (about a thousand in all) compared with a scan each; every
        // event is checked for strays.
        let before = all.enumerated().filter { $0.offset % 4 == 0 }.map(\.element)
        #expect(all.count > 500)
        #expect(try db.scalar("SELECT count(*) FROM events WHERE booking_in_row IS NOT NULL")?.int64Value ?? 0 > 1000)
        #expect(try db.scalar("SELECT count(*) FROM events WHERE booking_id IS NOT NULL AND booking_in_row IS NULL")?.int64Value ?? 0 > 0,
                "bookings given and indexed: after a dismissal")
        #expect(try Self.strays(db) == 0)
        try ReplayTests.expectHistoriesMatchScan(first, activities: [], bookings: before, "served")
        first.stop(keepFiles: true)

        let pruned = try Retention.prune(try Retention.open(path), before: start + 600, batch: 500)
        #expect(pruned.activities > 10, "\(pruned)")
        let server = try TestServer(now: t, directory: first.directory)
        defer { server.stop() }
        #expect(try Self.strays(try Database(path: path, mode: .readOnly)) == 0)
        try ReplayTests.expectHistoriesMatchScan(server, activities: [], bookings: before, "pruned")
    }

    /// Makes a file of the current version one from before `booking_in_row`: the index over
    /// every booking given, no column, the version one back.
    static func rewindToBeforeBookingInRow(_ db: Database) throws {
        try BroadcastVerdictTests.rewindToBeforeBroadcastVerdicts(db)
        try db.execute("""
            DROP TRIGGER events_booking_in_row_follow_row_deletes;
            DROP INDEX events_by_booking;
            ALTER TABLE events DROP COLUMN booking_in_row;
            CREATE INDEX events_by_booking ON events(booking_id, occurred_at, seq) WHERE booking_id IS NOT NULL;
            """)
        try db.setUserVersion(16)
    }
}
