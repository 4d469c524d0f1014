import Foundation
import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// Issue 19, item 6, live: an event dated far ahead or an end dated before its start is stored
/// with a warning and takes effect when it can have happened; no gauge is inflated.
@Suite struct ImpossibleDateTests {
    static let year2099 = 4_070_908_800.0   // 2099-01-01T00:00:00Z

    static func warnings(_ server: TestServer, _ activity: String) throws -> [[String]] {
        guard case .array(let events)? = try server.json("/api/activities/\(activity)")["events"] else { return [] }
        return events.map { event in
            guard case .array(let list)? = event["effect"]?["warnings"] else { return [] }
            return list.compactMap(\.stringValue)
        }
    }

    @Test func aStartIn2099IsActiveFromItsReceiptForEightHoursNotDecades() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [IngestTests.started("far", at: Self.year2099)]).status == 200)
        let gauge = "liveactivity_activities{attributes_type=\"TimerWidgetAttributes\",state=\"active\"}"
        #expect(try server.metric(gauge) == 1)
        #expect(try server.metric("liveactivity_push_warnings_total{warning=\"occurred_at_in_future\"}") == 1)
        let activity = try server.json("/api/activities/far")
        #expect(activity["started_at"]?.stringValue == RFC3339.format(TestServer.base))
        #expect(try Self.warnings(server, "far") == [["occurred_at_in_future"]])
        server.time.advance(by: 9 * 3600)
        #expect(try server.metric(gauge) == 0)
        #expect(try server.metric("liveactivity_activities_ended_total{attributes_type=\"TimerWidgetAttributes\",by=\"system\"}") == 1)
        try server.restart()
        #expect(try server.metric("liveactivity_push_warnings_total{warning=\"occurred_at_in_future\"}") == 1)
        #expect(try Self.warnings(server, "far") == [["occurred_at_in_future"]], "the replay of reads says the same")
    }

    @Test func anEndIn2001EndsAnActivityOf2026AtItsStart() throws {
        let server = try TestServer()
        defer { server.stop() }
        let end = JSONValue(["type": "activity.ended", "activity_id": "old", "occurred_at": "2001-01-01T00:00:00Z"] as [String: Any])
        #expect(try server.post(events: [IngestTests.started("old", at: TestServer.base - 60), end]).status == 200)
        let activity = try server.json("/api/activities/old")
        #expect(activity["ended_at"]?.stringValue == activity["started_at"]?.stringValue)
        #expect(activity["state"]?.stringValue == "ended")
        // Listed in `occurred_at` order, as sent: the end first.
        #expect(try Self.warnings(server, "old") == [["ended_before_start"], []])
        #expect(try server.metric("liveactivity_push_warnings_total{warning=\"ended_before_start\"}") == 1)
    }
}
