import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// A scheduled start (iOS 26, `activity.started` `start_date`; DESIGN.md section 4, "Pending"):
/// `pending` until the start date, then `active`, by time alone; its 8 hours count from the
/// start date; the list API filters and counts it; it survives a restart.
@Suite struct ScheduledStartTests {
    static let type = "TimerWidgetAttributes"
    static let pending = "liveactivity_activities{attributes_type=\"\(type)\",state=\"pending\"}"
    static let active = "liveactivity_activities{attributes_type=\"\(type)\",state=\"active\"}"
    static let ended = "liveactivity_activities{attributes_type=\"\(type)\",state=\"ended\"}"

    static func scheduled(_ id: String, at: Double, startDate: JSONValue) -> JSONValue {
        guard case .object(var o) = IngestTests.started(id, at: at) else { return .null }
        o["start_date"] = startDate
        return .object(o)
    }

    @Test func pendingUntilTheStartDateThenActiveWithAMovedClock() throws {
        try withTestServer { server in
            let start = TestServer.base + 600
            #expect(try server.post(events: [Self.scheduled("s1", at: TestServer.base, startDate: .number(JSONNumber(start)))]).status == 200)
            #expect(try server.json("/api/activities/s1")["state"] == "pending")
            #expect(try server.json("/api/activities/s1")["start_date"] == .string(RFC3339.format(start)))
            #expect(try server.metric(Self.pending) == 1)
            #expect(try server.metric(Self.active) == 0)
            let list = try server.json("/api/activities")
            #expect(list["counts"]?["pending"] == 1)
            #expect(list["counts"]?["active"] == 0)
            #expect(try server.json("/api/activities?state=pending")["activities"]?.arrayValue?.count == 1)
            #expect(try server.json("/api/activities?state=active")["activities"]?.arrayValue?.count == 0)

            // Still pending after a restart: the start date is kept with the activity.
            try server.restart()
            #expect(try server.json("/api/activities/s1")["state"] == "pending")
            #expect(try server.metric(Self.pending) == 1)

            server.time.set(start)
            #expect(try server.json("/api/activities/s1")["state"] == "active")
            #expect(try server.metric(Self.pending) == 0)
            #expect(try server.metric(Self.active) == 1)
            #expect(try server.json("/api/activities?state=active")["activities"]?.arrayValue?.count == 1)

            // Its 8 hours count from the start date, not from the request.
            server.time.set(start + LockScreenRules.maxActiveDuration - 1)
            #expect(try server.json("/api/activities/s1")["state"] == "active")
            server.time.set(start + LockScreenRules.maxActiveDuration)
            #expect(try server.json("/api/activities/s1")["state"] == "ended")
            #expect(try server.metric(Self.ended) == 1)
            #expect(try server.metric("liveactivity_activities_ended_total{attributes_type=\"\(Self.type)\",by=\"system\"}") == 1)
        }
    }

    @Test func aStartDateInRFC3339IsTheSameDate() throws {
        try withTestServer { server in
            let start = TestServer.base + 300
            #expect(try server.post(events: [Self.scheduled("s2", at: TestServer.base, startDate: .string(RFC3339.format(start)))]).status == 200)
            #expect(try server.json("/api/activities/s2")["start_date"] == .string(RFC3339.format(start)))
            #expect(try server.json("/api/activities/s2")["state"] == "pending")
            // Asked of the replay at an instant: pending before, active after.
            let before = try server.json("/api/activities/s2?at=\(RFC3339.format(start - 1))")
            #expect(before["state"] == "pending")
            let after = try server.json("/api/activities/s2?at=\(RFC3339.format(start))")
            #expect(after["state"] == "active")
        }
    }

    @Test func aStartDateOutsideTheDateWindowIsRefused() throws {
        try withTestServer { server in
            let response = try server.post(events: [Self.scheduled("s3", at: TestServer.base, startDate: .number(JSONNumber(1e12)))])
            #expect(response.status == 422, "\(response.text)")
        }
    }

    /// A stale date before the scheduled start: the card is not on the lock screen until the
    /// start, so it goes stale then, and is counted then, once.
    @Test func aStaleDateBeforeTheStartGoesStaleAtTheStart() throws {
        try withTestServer { server in
            let start = TestServer.base + 600
            guard case .object(var o) = Self.scheduled("s9", at: TestServer.base, startDate: .number(JSONNumber(start))) else { return }
            o["stale_date"] = .number(JSONNumber(TestServer.base + 300))
            #expect(try server.post(events: [.object(o)]).status == 200)
            let transitions = "liveactivity_stale_transitions_total{attributes_type=\"\(Self.type)\"}"
            server.time.set(TestServer.base + 400)
            #expect(try server.json("/api/activities/s9")["state"] == "pending")
            #expect(try server.metric(transitions) == 0, "not stale while pending")
            server.time.set(start)
            #expect(try server.json("/api/activities/s9")["state"] == "stale")
            #expect(try server.metric(transitions) == 1)
            let rows = try server.json("/api/activities/s9")["transitions"]?.arrayValue ?? []
            #expect(rows.first?["kind"] == "stale" && rows.first?["at"] == .string(RFC3339.format(start)), "\(rows)")
        }
    }
}
