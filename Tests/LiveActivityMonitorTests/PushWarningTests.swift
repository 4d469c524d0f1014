import Foundation
import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// Issue 21, item 1, live (real server, real SQLite file): strange but possible values are
/// stored as sent, with their warning, counted, and modelled as the phone would (DESIGN.md
/// sections 3 and 4). Each push is sent alone (the one-pass scanner takes it) and in a batch
/// (the general decoder): both give the same effect.
@Suite struct PushWarningTests {
    static let t0 = TestServer.base
    static let token = Scenario.tokenA

    static func start(_ id: String, at: Double = t0 - 600) -> JSONValue {
        JSONValue(["type": "activity.started", "activity_id": id, "booking_id": "BK-\(id)",
                   "attributes_type": "LiveActivityAttributes", "occurred_at": at,
                   "content_state": Scenario.ride(0.1, 9), "push_token": token] as [String: Any])
    }

    /// Each event's effect of an activity, in the read API's order.
    static func effects(_ server: TestServer, _ id: String) throws -> [JSONValue] {
        (try server.json("/api/activities/\(id)")["events"]?.arrayValue ?? []).map { $0["effect"] ?? .null }
    }

    static func warnings(_ effect: JSONValue) -> [String] {
        (effect["warnings"]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    static func warningCount(_ server: TestServer, _ warning: String) throws -> Double? {
        try server.metric("liveactivity_push_warnings_total{warning=\"\(warning)\"}")
    }

    @Test func aTimestampInMillisecondsIsStoredAppliedAndFreezesTheCard() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.start("ms")]).status == 200)
        let millis = (Self.t0 - 300) * 1000
        let frozen = Scenario.push("ms", "ms-1", at: Self.t0 - 300, token: Self.token, timestamp: millis,
                                   content: Scenario.ride(0.3, 7))
        let response = try server.post(events: [frozen])
        #expect(response.status == 200, "stored, not refused: \(response.text)")
        let correct = Scenario.push("ms", "ms-2", at: Self.t0 - 100, token: Self.token, content: Scenario.ride(0.6, 4))
        #expect(try server.post(events: [correct]).status == 200)

        let activity = try server.json("/api/activities/ms")
        #expect(activity["content_state"] == JSONValue(Scenario.ride(0.3, 7)), "the newest by number stays")
        #expect(activity["content_timestamp"] == .number(JSONNumber(millis)), "a date RFC 3339 cannot write: its number")
        let events = activity["events"]?.arrayValue ?? []
        #expect(events.count == 3)
        #expect(events.dropFirst().first?["timestamp"] == .number(JSONNumber(millis)), "stored as sent")
        let effects = events.map { $0["effect"] ?? .null }
        #expect(effects.map { $0["result"]?.stringValue } == ["applied", "applied", "no_effect"])
        #expect(effects.map(Self.warnings) == [[], ["timestamp_in_future"], []])
        #expect(effects.last?["why"] == "out_of_order")
        #expect(try Self.warningCount(server, "timestamp_in_future") == 1)
        #expect(try server.metric("liveactivity_pushes_without_effect_total{why=\"out_of_order\"}") == 1)

        try server.restart()
        #expect(try Self.effects(server, "ms").map(Self.warnings) == [[], ["timestamp_in_future"], []])
        #expect(try server.json("/api/activities/ms")["content_state"] == JSONValue(Scenario.ride(0.3, 7)))
        #expect(try Self.warningCount(server, "timestamp_in_future") == 1)
    }

    /// One event per warning, and what it must not be confused with.
    struct Case: CustomTestStringConvertible, Sendable {
        let warning: String
        let extra: [String: Double]
        let texts: [String: String]
        let event: String
        var testDescription: String { warning }

        init(_ warning: String, event: String = "update", _ extra: [String: Double] = [:], texts: [String: String] = [:]) {
            self.warning = warning
            self.extra = extra
            self.texts = texts
            self.event = event
        }

        func push(_ id: String, _ key: String, at: Double) -> JSONValue {
            var more: [String: Any] = [:]
            for (name, offset) in extra { more[name] = name == "payload_bytes" || name == "status" ? offset : at + offset }
            for (name, text) in texts { more[name] = text }
            return Scenario.push(id, key, at: at, event: event, token: PushWarningTests.token,
                                 content: Scenario.ride(0.5, 5), extra: more)
        }
    }

    static let cases: [Case] = [
        Case("stale_date_in_past", ["stale_date": -60]),
        Case("dismissal_date_beyond_4h", event: "end", ["dismissal_date": 5 * 3600]),
        Case("payload_too_large", ["payload_bytes": 4097]),
        Case("unknown_reason", ["status": 502]),
        Case("unknown_reason", ["status": 400], texts: ["reason": "NotAnAPNsReason"]),
        Case("timestamp_in_past", ["timestamp": -2 * 86_400]),
    ]

    @Test(arguments: cases)
    func eachWarningIsStoredCountedAndTheSameOnBothDecoders(_ c: Case) throws {
        let server = try TestServer()
        defer { server.stop() }
        let at = Self.t0 - 60
        // Alone: the one-pass scanner. In a batch: the general decoder.
        #expect(try server.post(events: [Self.start("fast"), Self.start("tree")]).status == 200)
        let fast = try server.post(c.push("fast", "f", at: at).jsonString)
        #expect(fast.status == 200, "\(fast.text)")
        let tree = try server.post(events: [c.push("tree", "t", at: at), JSONValue(["type": "activity.stale",
                                     "activity_id": "other", "occurred_at": at] as [String: Any])])
        #expect(tree.status == 200, "\(tree.text)")
        let a = try Self.effects(server, "fast"), b = try Self.effects(server, "tree")
        #expect(a.count == 2 && a == b, "\(a) vs \(b)")
        #expect(a.last.map(Self.warnings) == [c.warning], "\(a)")
        #expect(a.first.map(Self.warnings) == [], "the start warns of nothing")
        #expect(try Self.warningCount(server, c.warning) == 2)
        let others = EventEffect.Warning.allCases.map(\.name).filter { $0 != c.warning }
        for other in others { #expect(try Self.warningCount(server, other) == 0, "\(other)") }
        try server.restart()
        #expect(try Self.effects(server, "fast") == a, "a replay of the stored events says the same")
    }

    @Test func aDismissalDateBeyondFourHoursIsCutToFourHours() throws {
        let server = try TestServer()
        defer { server.stop() }
        let end = Self.t0 - 60
        let push = Case("dismissal_date_beyond_4h", event: "end", ["dismissal_date": 5 * 3600]).push("d", "d1", at: end)
        #expect(try server.post(events: [Self.start("d"), push]).status == 200)
        let activity = try server.json("/api/activities/d")
        #expect(activity["visible_until"]?.stringValue == RFC3339.format(end + LockScreenRules.maxEndedVisibility))
        // An app-reported end warns the same: warnings are the event's, whatever its type.
        let ended = JSONValue(["type": "activity.ended", "activity_id": "e", "occurred_at": end,
                               "dismissal_policy": "after", "dismissal_date": end + 5 * 3600] as [String: Any])
        #expect(try server.post(events: [Self.start("e"), ended]).status == 200)
        #expect(try Self.effects(server, "e").map(Self.warnings) == [[], ["dismissal_date_beyond_4h"]])
        #expect(try Self.warningCount(server, "dismissal_date_beyond_4h") == 2)
    }

    @Test func aStartPushWithoutAnAlertSaysSo() throws {
        let server = try TestServer()
        defer { server.stop() }
        func start(_ key: String, alert: Bool) -> JSONValue {
            var o: [String: Any] = ["id": key, "type": "push.sent", "event": "start", "booking_id": "BK-\(key)",
                                    "occurred_at": Self.t0 - 60, "status": 200, "latency_ms": 30, "push_token": Self.token,
                                    "attributes_type": "LiveActivityAttributes", "content_state": Scenario.ride(0, 9)]
            if alert { o["alert"] = ["title": "Your ride", "body": "Ana is on the way"] }
            return JSONValue(o)
        }
        #expect(try server.post(start("quiet", alert: false).jsonString).status == 200)
        #expect(try server.post(events: [start("loud", alert: true), start("quiet-2", alert: false)]).status == 200)
        #expect(try Self.warningCount(server, "start_without_alert") == 2)
        let booking = try server.json("/api/bookings/BK-loud")
        #expect(booking["events"]?.arrayValue?.first?["effect"].map(Self.warnings) == [])
        let quiet = try server.json("/api/bookings/BK-quiet")
        #expect(quiet["events"]?.arrayValue?.first?["effect"].map(Self.warnings) == ["start_without_alert"])
    }

    @Test func whatCannotBeUnderstoodIsStillRefused() throws {
        let server = try TestServer()
        defer { server.stop() }
        // A date no 64-bit millisecond count can hold, an unknown type, a required field
        // missing, a wrong JSON type: 422, nothing stored.
        let bad: [String] = [
            Scenario.push("x", "x1", at: Self.t0, extra: ["timestamp": 1e300]).jsonString,
            #"{"type":"push.teleported","activity_id":"x","occurred_at":1795000000}"#,
            #"{"type":"push.sent","activity_id":"x","occurred_at":1795000000,"event":"update","latency_ms":1,"push_token":"\#(Self.token)"}"#,
            Scenario.push("x", "x2", at: Self.t0, extra: ["timestamp": "soon"]).jsonString,
            Scenario.push("x", "x3", at: Self.t0, extra: ["occurred_at": 1_795_000_000_000.0]).jsonString,
        ]
        for body in bad {
            let response = try server.post(body)
            #expect(response.status == 422, "\(body): \(response.text)")
        }
        try IngestTests.expectNothingStored(server)
    }
}
