import Foundation
import JSON
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// A booking's timeline: events that name the booking, and events of its activities that only
/// inherit it (their `booking_id` column stays empty so that the index skips them).
@Suite struct BookingLookupTests {
    @Test func findsEventsThatNameTheBookingAndEventsOfItsActivities() throws {
        let server = try TestServer()
        defer { server.stop() }
        let t = TestServer.base
        // Before its start is known, so nothing to inherit; found through the activity later.
        _ = try server.post(events: [Scenario.push("a", "early", at: t - 500, token: IngestTests.token)])
        _ = try server.post(events: [IngestTests.started("a", at: t - 400)])
        _ = try server.post(events: [Scenario.push("a", "late", at: t - 300, token: IngestTests.token)])
        // A push-to-start names the booking but no activity.
        _ = try server.post(events: [Scenario.push("", "pts", at: t - 200, event: "start", token: IngestTests.token,
                                                   extra: ["activity_id": NSNull(), "booking_id": "BK-a",
                                                           "attributes_type": "TimerWidgetAttributes"])])
        _ = try server.post(events: [IngestTests.started("other", at: t - 100)])

        let events = try server.json("/api/bookings/BK-a")["events"]
        guard case .array(let items)? = events else { Issue.record("no events array"); return }
        #expect(items.map { $0["id"]?.stringValue ?? $0["type"]?.stringValue } == ["early", "activity.started", "late", "pts"])
        #expect(items[2]["booking_id"]?.stringValue == "BK-a", "an inherited booking is in the stored event")
        #expect(try server.json("/api/bookings/BK-other")["events"]?[0]?["activity_id"]?.stringValue == "other")
    }

    @Test func lookupsSearchIndexesAndNeverScanTheEventLog() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try EventStore(path: dir + "/db.sqlite").close()
        let db = try Database(path: dir + "/db.sqlite")
        for sql in [EventStore.bookingEventsSQL, EventStore.activityEventsSQL] {
            let plan = try db.query("EXPLAIN QUERY PLAN " + sql, [.text("BK-1")])
                .compactMap { row in row.last.flatMap { if case .text(let s) = $0 { s } else { nil } } }
            #expect(!plan.isEmpty)
            #expect(!plan.contains { $0.hasPrefix("SCAN") && !$0.hasPrefix("SCAN store_state") }, "\(plan)")
        }
    }

    /// A database written before migration 2: inherited bookings in the column, priority-10
    /// times as decimal text. It upgrades in place and reads as before.
    @Test func versionOneDatabasesUpgradeAndReadAsBefore() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/db.sqlite"
        let t = TestServer.base
        do {
            let db = try Database(path: path)
            try db.migrate(Array(Schema.migrations.prefix(1)))
            #expect(try db.userVersion == 1)
            try db.run("""
                INSERT INTO activities (activity_id, booking_id, attributes_type, source, started_at, content_timestamp,
                                        reported_stale, stale_counted, token_rotations, priority10_times)
                VALUES ('a', 'BK-a', 'TimerWidgetAttributes', 'app', ?1, ?1, 0, 0, 0, ?2)
                """, [.real(t - 600), .text("\(t - 300),\(t - 200.5)")])
            for (n, (type, booking)) in [("activity.started", "BK-a"), ("push.sent", "BK-a")].enumerated() {
                try db.run("""
                    INSERT INTO events (event_id, type, activity_id, booking_id, occurred_at, received_at, body)
                    VALUES (?1, ?2, 'a', ?3, ?4, ?4, ?5)
                    """, [.text("e\(n)"), .text(type), .text(booking), .real(t - 600 + Double(n)),
                          .text(#"{"id":"e\#(n)","type":"\#(type)","booking_id":"\#(booking)"}"#)])
            }
        }
        let store = try EventStore(path: path, clock: Clock.manual(t).0)
        defer { store.close() }
        #expect(try store.record("a")?.priority10Count(at: t) == 2)
        #expect(try store.eventDocuments(bookingID: "BK-a").count == 2, "each event once")
        let db = try Database(path: path)
        #expect(try db.userVersion == Schema.migrations.count)
        let sql = try db.scalar("SELECT sql FROM sqlite_master WHERE name = 'events_by_booking'")
        guard case .text(let text)? = sql else { Issue.record("events_by_booking is missing"); return }
        #expect(text.contains("WHERE booking_id IS NOT NULL"))
    }
}
