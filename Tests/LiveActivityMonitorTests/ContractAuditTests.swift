import Foundation
import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// DESIGN.md sections 2–5 where the lock-screen vectors do not reach: events of different types
/// arriving out of order, push-to-start, dismissal policies, stale dates in the past, the
/// priority-10 window, and what each event moves in /metrics, over real HTTP and real SQLite.
@Suite struct ContractAuditTests {
    static let t = TestServer.base
    static let type = "LiveActivityAttributes"
    static let tokenA = Scenario.tokenA
    static let tokenB = Scenario.tokenB
    static let tokenC = Scenario.tokenC

    static func started(_ id: String, at: Double, extra: [String: Any] = [:]) -> JSONValue {
        var o: [String: Any] = ["type": "activity.started", "activity_id": id, "booking_id": "BK-\(id)",
                                "attributes_type": type, "occurred_at": at,
                                "content_state": Scenario.ride(0.1, 9), "push_token": tokenA]
        o.merge(extra) { $1 }
        return JSONValue(o)
    }

    static func event(_ type: String, _ id: String, at: Double, extra: [String: Any] = [:]) -> JSONValue {
        var o: [String: Any] = ["type": type, "activity_id": id, "occurred_at": at]
        o.merge(extra) { $1 }
        return JSONValue(o)
    }

    static func series(_ family: String, _ labels: String = "") -> String {
        labels.isEmpty ? family : "\(family){\(labels)}"
    }

    static let endedTotal = ["app", "push", "system"].map {
        series("liveactivity_activities_ended_total", "attributes_type=\"\(type)\",by=\"\($0)\"")
    }

    /// Every `by` of `activities_ended_total` for the type, summed.
    static func ended(_ server: TestServer) throws -> Double {
        let text = try server.get("/metrics").text
        return endedTotal.reduce(0) { $0 + (MetricsText.value(of: $1, in: text) ?? 0) }
    }

    // MARK: Ending once

    /// An activity ends once: an end reported late, with an earlier time than the end already
    /// recorded, is not counted a second time under another `by`.
    @Test func aLateEarlierEndIsNotCountedTwice() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.started("a", at: Self.t - 3600),
                                         Self.event("activity.ended", "a", at: Self.t - 100)]).status == 200)
        #expect(try Self.ended(server) == 1)
        // The backend's end push, sent before the app's end, arrives after it.
        #expect(try server.post(events: [Scenario.push("a", "p-end", at: Self.t - 200, event: "end")]).status == 200)
        #expect(try Self.ended(server) == 1, "one activity ended, counted twice")
        let a = try server.json("/api/activities/a")
        #expect(a["state"]?.stringValue == "ended")
    }

    /// The system ends an activity at 8 h; an app end that happened before but arrives after
    /// that is not a second end.
    @Test func anAppEndReportedAfterTheSystemEndIsNotCountedTwice() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.started("a", at: Self.t - 9 * 3600)]).status == 200)
        #expect(try server.metric(Self.endedTotal[2]) == 1)
        #expect(try server.post(events: [Self.event("activity.ended", "a", at: Self.t - 2 * 3600)]).status == 200)
        #expect(try Self.ended(server) == 1, "one activity ended, counted twice")
        #expect(try server.post(events: [Self.event("activity.dismissed", "a", at: Self.t - 3600)]).status == 200)
        #expect(try Self.ended(server) == 1, "a dismissal of an ended activity ends nothing")
        #expect(try server.metric("liveactivity_activities_dismissed_total{attributes_type=\"\(Self.type)\"}") == 1)
    }

    // MARK: Out of order across types

    /// "activity.stale marks it stale until a newer update": a stale report older than the
    /// content shown (which arrived first) does not make the newer content stale.
    @Test func aStaleReportOlderThanTheShownContentIsIgnored() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.started("a", at: Self.t - 600),
                                         Scenario.push("a", "p1", at: Self.t - 100, content: Scenario.ride(0.5, 5))]).status == 200)
        #expect(try server.post(events: [Self.event("activity.stale", "a", at: Self.t - 300)]).status == 200)
        #expect(try server.json("/api/activities/a")["state"]?.stringValue == "active")
        #expect(try server.metric("liveactivity_stale_transitions_total{attributes_type=\"\(Self.type)\"}") == 0)
        // A report newer than the content does make it stale.
        #expect(try server.post(events: [Self.event("activity.stale", "a", at: Self.t - 50)]).status == 200)
        #expect(try server.json("/api/activities/a")["state"]?.stringValue == "stale")
        #expect(try server.metric("liveactivity_stale_transitions_total{attributes_type=\"\(Self.type)\"}") == 1)
    }

    /// Token rotations that arrive out of order: the current token is the one reported last in
    /// time (the old one must be dropped), whatever order the reports arrive in.
    @Test func rotationsArrivingOutOfOrderKeepTheNewestToken() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.started("a", at: Self.t - 600),
                                         Self.event("activity.token_updated", "a", at: Self.t - 100,
                                                    extra: ["push_token": Self.tokenC])]).status == 200)
        #expect(try server.post(events: [Self.event("activity.token_updated", "a", at: Self.t - 200,
                                                    extra: ["push_token": Self.tokenB])]).status == 200)
        let token = try server.json("/api/activities/a")["token"]
        #expect(token?["fingerprint"]?.stringValue == TokenFingerprint.of(Self.tokenC))
        #expect(token?["rotated_at"]?.stringValue == RFC3339.format(Self.t - 100))
        #expect(token?["rotations"] == JSONValue(2))
        #expect(try server.metric("liveactivity_push_token_rotations_total{attributes_type=\"\(Self.type)\"}") == 2)
        // A push to the newest token is applied; one to B, superseded, is not.
        #expect(try server.post(events: [Scenario.push("a", "p1", at: Self.t - 50, token: Self.tokenC, content: Scenario.ride(0.6, 4)),
                                         Scenario.push("a", "p2", at: Self.t - 40, token: Self.tokenB, content: Scenario.ride(0.7, 3))]).status == 200)
        #expect(try server.json("/api/activities/a")["content_state"] == JSONValue(Scenario.ride(0.6, 4)))
        #expect(try server.metric("liveactivity_pushes_without_effect_total{why=\"superseded_token\"}") == 1)
    }

    /// After a 410 the token is invalid; a rotation brings a valid one, the old one stays dead.
    @Test func aTokenUpdateAfter410() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.post(events: [Self.started("a", at: Self.t - 600),
                                     Scenario.push("a", "p1", at: Self.t - 500, status: 410, reason: "Unregistered")])
        #expect(try server.json("/api/activities/a")["token"]?["invalidated"] == .bool(true))
        _ = try server.post(events: [Self.event("activity.token_updated", "a", at: Self.t - 400, extra: ["push_token": Self.tokenB])])
        let token = try server.json("/api/activities/a")["token"]
        #expect(token?["invalidated"] == .bool(false))
        #expect(token?["invalid_reason"] == .null)
        #expect(token?["fingerprint"]?.stringValue == TokenFingerprint.of(Self.tokenB))
        _ = try server.post(events: [Scenario.push("a", "p2", at: Self.t - 300, token: Self.tokenB, content: Scenario.ride(0.5, 5)),
                                     Scenario.push("a", "p3", at: Self.t - 200, token: Self.tokenA, content: Scenario.ride(0.9, 1))])
        #expect(try server.json("/api/activities/a")["content_state"] == JSONValue(Scenario.ride(0.5, 5)))
        #expect(try server.metric("liveactivity_pushes_without_effect_total{why=\"superseded_token\"}") == 1)
        #expect(try server.metric("liveactivity_push_tokens_invalidated_total{reason=\"Unregistered\"}") == 1)
        #expect(try server.metric("liveactivity_push_token_rotations_total{attributes_type=\"\(Self.type)\"}") == 1)
    }

    /// An app update after the end changes nothing (pushes after the end are ignored; so is this).
    @Test func anAppUpdateAfterTheEndChangesNothing() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.post(events: [Self.started("a", at: Self.t - 600),
                                     Self.event("activity.ended", "a", at: Self.t - 300, extra: ["content_state": Scenario.ride(1, 0)])])
        _ = try server.post(events: [Self.event("activity.updated", "a", at: Self.t - 100, extra: ["content_state": Scenario.ride(0.3, 7)])])
        let a = try server.json("/api/activities/a")
        #expect(a["state"]?.stringValue == "ended")
        #expect(a["content_state"] == JSONValue(Scenario.ride(1, 0)))
        #expect(try server.metric("liveactivity_ingest_events_total{type=\"activity.updated\"}") == 1)
    }

    // MARK: Push-to-start

    /// A 200 push-to-start creates the activity (source push_to_start), and is its last push and
    /// one of its priority-10 pushes; the device's own start report later does not start it again.
    @Test func pushToStartCreatesTheActivityAndIsItsLastPush() throws {
        let server = try TestServer()
        defer { server.stop() }
        let start = Scenario.push("pts", "p0", at: Self.t - 300, event: "start", token: Self.tokenC, content: Scenario.ride(0, 12),
                                  extra: ["booking_id": "BK-pts", "attributes_type": Self.type, "attributes": ["name": "Ride"]])
        #expect(try server.post(events: [start]).status == 200)
        var a = try server.json("/api/activities/pts")
        #expect(a["source"]?.stringValue == "push_to_start")
        #expect(a["state"]?.stringValue == "active")
        #expect(a["content_state"] == JSONValue(Scenario.ride(0, 12)))
        #expect(a["token"]?["fingerprint"] == .null, "a push-to-start token is not the activity's update token")
        #expect(a["last_push"]?["status"] == JSONValue(200))
        #expect(a["last_push"]?["at"]?.stringValue == RFC3339.format(Self.t - 300))
        #expect(a["priority10_last_hour"] == JSONValue(1))
        #expect(try server.metric("liveactivity_activities_started_total{attributes_type=\"\(Self.type)\",source=\"push_to_start\"}") == 1)
        #expect(try server.metric("liveactivity_push_requests_total{event=\"start\",priority=\"10\",reason=\"none\",status=\"200\"}") == 1)

        let device = Self.started("pts", at: Self.t - 290, extra: ["source": "push_to_start", "push_token": Self.tokenA])
        #expect(try server.post(events: [device]).status == 200)
        a = try server.json("/api/activities/pts")
        #expect(a["token"]?["fingerprint"]?.stringValue == TokenFingerprint.of(Self.tokenA))
        #expect(try server.metric("liveactivity_activities_started_total{attributes_type=\"\(Self.type)\",source=\"push_to_start\"}") == 1)
        #expect(try server.metric("liveactivity_activities_started_total{attributes_type=\"\(Self.type)\",source=\"app\"}") == 0)
    }

    /// A refused push-to-start creates nothing.
    @Test func aRefusedPushToStartCreatesNothing() throws {
        let server = try TestServer()
        defer { server.stop() }
        let start = Scenario.push("pts", "p0", at: Self.t - 300, event: "start", status: 403, reason: "InvalidProviderToken",
                                  extra: ["booking_id": "BK-pts", "attributes_type": Self.type])
        #expect(try server.post(events: [start]).status == 200)
        #expect(try server.get("/api/activities/pts").status == 404)
        // Zero, not absent: the type has a template, so its series exist from the start.
        #expect(try server.metric("liveactivity_activities_started_total{attributes_type=\"\(Self.type)\",source=\"push_to_start\"}") == 0)
        #expect(try server.get("/api/bookings/BK-pts").status == 200, "the booking's history has the push")
    }

    // MARK: Dismissal, limits, stale dates

    /// `immediate` removes it at once; `after` keeps it until the date; `default` 4 h after the end.
    @Test(arguments: [("immediate", nil, 0.0), ("after", 1800.0, 1800.0), ("default", nil, 4 * 3600.0)] as [(String, Double?, Double)])
    func dismissalPolicies(_ policy: String, _ date: Double?, _ visibleFor: Double) throws {
        let server = try TestServer()
        defer { server.stop() }
        var extra: [String: Any] = ["dismissal_policy": policy]
        if let date { extra["dismissal_date"] = Self.t + date }
        _ = try server.post(events: [Self.started("a", at: Self.t - 600), Self.event("activity.ended", "a", at: Self.t, extra: extra)])
        let a = try server.json("/api/activities/a")
        #expect(a["visible_until"]?.stringValue == RFC3339.format(Self.t + visibleFor))
        #expect(a["state"]?.stringValue == (visibleFor == 0 ? "dismissed" : "ended"))
        server.time.set(Self.t + visibleFor)
        #expect(try server.json("/api/activities/a")["state"]?.stringValue == "dismissed")
        #expect(try server.metric("liveactivity_activities_dismissed_total{attributes_type=\"\(Self.type)\"}") == 1)
        #expect(try server.metric("liveactivity_activities{attributes_type=\"\(Self.type)\",state=\"ended\"}") == 0)
    }

    /// A stale date already past at ingest: stale at once, counted once, also after a restart.
    @Test func aStaleDateInThePastAtIngest() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.post(events: [Self.started("a", at: Self.t - 600, extra: ["stale_date": Self.t - 300])])
        #expect(try server.json("/api/activities/a")["state"]?.stringValue == "stale")
        let stale = "liveactivity_stale_transitions_total{attributes_type=\"\(Self.type)\"}"
        #expect(try server.metric(stale) == 1)
        try server.restart()
        #expect(try server.metric(stale) == 1)
        #expect(try server.metric("liveactivity_activities{attributes_type=\"\(Self.type)\",state=\"stale\"}") == 1)
    }

    // MARK: Priority-10 budget

    /// Priority-10 pushes leave the count an hour after they were sent; priority 5 never counts.
    @Test func priority10PushesLeaveTheWindowAfterAnHour() throws {
        let server = try TestServer { $0.priority10Budget = 2 }
        defer { server.stop() }
        _ = try server.post(events: [Self.started("a", at: Self.t - 600)]
                            + (0..<3).map { Scenario.push("a", "p\($0)", at: Self.t - 300 + Double($0)) }
                            + [Scenario.push("a", "q", at: Self.t - 200, priority: 5)])
        #expect(try server.json("/api/activities/a")["priority10_last_hour"] == JSONValue(3))
        #expect(try server.metric("liveactivity_priority10_heavy_activities") == 1)
        server.time.set(Self.t - 300 + 3600 + 120)
        #expect(try server.json("/api/activities/a")["priority10_last_hour"] == JSONValue(0))
        #expect(try server.metric("liveactivity_priority10_heavy_activities") == 0)
    }

    // MARK: Duplicates and retries

    /// A retried request moves no metric: not the push families, not the no-effect counter.
    @Test func aRetriedRequestMovesNoMetric() throws {
        let server = try TestServer()
        defer { server.stop() }
        let events = [Self.started("a", at: Self.t - 600, extra: ["id": "s"]),
                      Scenario.push("a", "p1", at: Self.t - 500, content: Scenario.ride(0.5, 5)),
                      Scenario.push("a", "p2", at: Self.t - 400, timestamp: Self.t - 550),
                      Scenario.push("a", "p3", at: Self.t - 300, status: 410, reason: "Unregistered"),
                      Scenario.push("ghost", "p4", at: Self.t - 300)]
        #expect(try server.post(events: events).text == #"{"accepted":5,"duplicates":0}"#)
        let before = MetricsText.dataOnly(try server.get("/metrics").text, keepHTTP: false)
        #expect(try server.post(events: events).text == #"{"accepted":0,"duplicates":5}"#)
        let after = MetricsText.dataOnly(try server.get("/metrics").text, keepHTTP: false)
        let changed = zip(before.split(separator: "\n"), after.split(separator: "\n")).filter { $0 != $1 }
        #expect(changed.map { "\($0.1)" } == ["liveactivity_ingest_duplicates_total 5"])
    }

    // MARK: Restart

    /// A server restarted in the middle of a timeline (and down while stale dates, 8 h ends and
    /// dismissals fell due) shows what a server that stayed up shows: every metric and activity.
    @Test func aRestartMidTimelineMatchesAServerThatStayedUp() throws {
        let up = try TestServer()
        defer { up.stop() }
        let restarted = try TestServer()
        defer { restarted.stop() }
        let first: [JSONValue] = [
            Self.started("a", at: Self.t - 600, extra: ["stale_date": Self.t + 600]),
            Self.started("b", at: Self.t - 7 * 3600),
            Scenario.push("pts", "p0", at: Self.t - 300, event: "start", token: Self.tokenC, content: Scenario.ride(0, 12),
                          extra: ["booking_id": "BK-pts", "attributes_type": Self.type]),
            Self.event("activity.token_updated", "a", at: Self.t - 200, extra: ["push_token": Self.tokenB]),
            Scenario.push("a", "p1", at: Self.t - 100, token: Self.tokenA),
            Scenario.push("b", "p2", at: Self.t - 50, status: 410, reason: "Unregistered"),
        ]
        let second: [JSONValue] = [
            Scenario.push("a", "p3", at: Self.t + 2 * 3600, token: Self.tokenB, content: Scenario.ride(0.5, 5)),
            Self.event("activity.ended", "pts", at: Self.t + 2 * 3600, extra: ["dismissal_date": Self.t + 3 * 3600]),
        ]
        for server in [up, restarted] { #expect(try server.post(events: first).status == 200) }
        try restarted.restart()
        for server in [up, restarted] {
            server.time.set(Self.t + 2 * 3600)
            _ = try server.get("/metrics")   // the server that stayed up sees time pass
        }
        try restarted.restart()
        for server in [up, restarted] { #expect(try server.post(events: second).status == 200) }
        for server in [up, restarted] { server.time.set(Self.t + 5 * 3600) }
        try restarted.restart()
        func view(_ server: TestServer) throws -> [String] {
            [MetricsText.dataOnly(try server.get("/metrics").text, keepHTTP: false),
             try server.get("/api/activities").text, try server.get("/api/activities?state=dismissed").text]
                + (try ["a", "b", "pts"].map { try server.get("/api/activities/\($0)").text.replacingOccurrences(
                    of: #""received_at":"[^"]*""#, with: "", options: .regularExpression) })
        }
        let a = try view(up), b = try view(restarted)
        for (x, y) in zip(a, b) { #expect(x == y) }
        #expect(try restarted.metric("liveactivity_stale_transitions_total{attributes_type=\"\(Self.type)\"}") == 1)
        #expect(try restarted.metric(Self.endedTotal[2]) == 1)
    }
}
