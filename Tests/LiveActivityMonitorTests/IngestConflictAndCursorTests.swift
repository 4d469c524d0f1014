import Foundation
import JSON
import Testing
@testable import LiveActivityMonitor

/// Issue 19, item 7: an id reused for other content is said, not passed off as a retry; a
/// cursor the server never gave is a 400.
@Suite struct IngestConflictAndCursorTests {
    @Test func theSameIdWithOtherContentIsAConflict() throws {
        let server = try TestServer()
        defer { server.stop() }
        let first = IngestTests.started("c1", eventID: "evt-1")
        #expect(try server.post(events: [first]).text == #"{"accepted":1,"duplicates":0}"#)
        // A retry: the same content.
        #expect(try server.post(events: [first]).text == #"{"accepted":0,"duplicates":1}"#)
        // The same id, other content (another activity), twice in one request with a new one.
        let reused = IngestTests.started("c2", eventID: "evt-1")
        let response = try server.post(events: [reused, reused, IngestTests.started("c3", eventID: "evt-3")])
        #expect(response.text == #"{"accepted":1,"duplicates":2,"conflicts":2}"#)
        #expect(try server.get("/api/activities/c2").status == 404, "the stored event stays")
        #expect(try server.metric("liveactivity_ingest_duplicates_total") == 3)
        #expect(try server.metric("liveactivity_ingest_conflicts_total") == 2)
        try server.restart()
        #expect(try server.metric("liveactivity_ingest_conflicts_total") == 2)
    }

    /// A push stores its activity's booking in its document; a retry of it is compared with that
    /// document, so it is a duplicate, not a conflict, whether it comes in the same request or
    /// in a later one; other content under its id is a conflict all the same.
    @Test func aRetriedPushThatInheritsItsBookingIsNoConflict() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [IngestTests.started("c1")]).text == #"{"accepted":1,"duplicates":0}"#)
        let push = ContentShapeTests.push("c1", "push-1", at: TestServer.base - 30, ["startedAt": 1])
        #expect(try server.post(events: [push, push]).text == #"{"accepted":1,"duplicates":1}"#)
        #expect(try server.post(events: [push]).text == #"{"accepted":0,"duplicates":1}"#)
        let other = ContentShapeTests.push("c1", "push-1", at: TestServer.base - 30, ["startedAt": 2])
        #expect(try server.post(events: [other]).text == #"{"accepted":0,"duplicates":1,"conflicts":1}"#)
        #expect(try server.metric("liveactivity_ingest_conflicts_total") == 1)
        let events = try server.json("/api/bookings/BK-c1")["events"]?.arrayValue ?? []
        #expect(events.count == 2, "the start and the push, found by the booking the push inherited")
    }

    /// A push reported before its activity's start was stored without a booking (none known
    /// then); a retry of it after the start, which would inherit one now, is the same event: a
    /// duplicate, not a conflict, on both stores. Before, every such retry counted a conflict.
    @Test(arguments: [false, true]) func aRetryOfAPushStoredBeforeItsStartIsNoConflict(postgres: Bool) throws {
        let uri = postgres ? try PostgresCluster.database() : nil
        let server = try TestServer { c in if let uri { c.databasePath = uri } }
        defer { server.stop() }
        let push = ContentShapeTests.push("early", "push-early", at: TestServer.base - 30, ["startedAt": 1])
        #expect(try server.post(events: [push]).text == #"{"accepted":1,"duplicates":0}"#)
        #expect(try server.post(events: [IngestTests.started("early")]).status == 200)
        #expect(try server.post(events: [push]).text == #"{"accepted":0,"duplicates":1}"#)
        let other = ContentShapeTests.push("early", "push-early", at: TestServer.base - 30, ["startedAt": 2])
        #expect(try server.post(events: [other]).text == #"{"accepted":0,"duplicates":1,"conflicts":1}"#)
        #expect(try server.metric("liveactivity_ingest_conflicts_total") == 1)
    }

    @Test(arguments: ["nan~nan~x", "inf~0~x", "0~-inf~x", "0~0~", "0~0", "0~0~a\u{1}b", "x~0~a",
                      "0~0~" + String(repeating: "a", count: 129)])
    func aCursorTheServerNeverGaveIsA400(_ cursor: String) throws {
        let server = try TestServer()
        defer { server.stop() }
        let escaped = cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor
        let response = try server.get("/api/activities?cursor=" + escaped)
        #expect(response.status == 400, "\(cursor): \(response.text)")
        #expect(response.text == #"{"error":"cursor is not one this server gave"}"#)
    }

    @Test func aCursorTheServerGaveStillPages() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: (0..<3).map { IngestTests.started("p\($0)") }).status == 200)
        let first = try server.json("/api/activities?limit=2")
        let cursor = try #require(first["next_cursor"]?.stringValue)
        let escaped = cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor
        let second = try server.json("/api/activities?limit=2&cursor=" + escaped)
        guard case .array(let page)? = second["activities"] else { Issue.record("no page"); return }
        #expect(page.count == 1)
    }
}
