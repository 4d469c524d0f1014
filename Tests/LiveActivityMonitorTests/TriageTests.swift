import Foundation
import JSON
import Testing
@testable import LiveActivityMonitor

/// Issue 21, item 5: `GET /api/triage` groups what needs a look now by problem, with counts,
/// each activity naming its booking; time alone moves activities in and out of the groups.
@Suite struct TriageTests {
    /// Problem → (count, activity ids listed).
    static func groups(_ answer: JSONValue) -> [String: (count: Int, ids: [String])] {
        var out: [String: (Int, [String])] = [:]
        for group in answer["problems"]?.arrayValue ?? [] {
            let ids = (group["activities"]?.arrayValue ?? []).compactMap { $0["activity_id"]?.stringValue }
            out[group["problem"]?.stringValue ?? "?"] = (Int(group["count"]?.doubleValue ?? -1), ids)
        }
        return out
    }

    static func started(_ id: String, at: Double, staleDate: Double? = nil) -> JSONValue {
        var o: [String: Any] = ["type": "activity.started", "activity_id": id, "booking_id": "BK-\(id)",
                                "attributes_type": "LiveActivityAttributes", "occurred_at": at,
                                "content_state": Scenario.ride(0.1, 9), "push_token": Scenario.tokenA]
        if let staleDate { o["stale_date"] = staleDate }
        return JSONValue(o)
    }

    @Test func eachProblemIsGroupedWithItsBookingAndTimeMovesThem() throws {
        let server = try TestServer { $0.priority10Budget = 3 }
        defer { server.stop() }
        let now = TestServer.base
        var events = [
            Self.started("fine", at: now - 600),
            Self.started("stale", at: now - 600, staleDate: now - 60),
            Self.started("dead", at: now - 500),
            Scenario.push("dead", "d1", at: now - 400, status: 410, reason: "Unregistered"),
            Self.started("throttled", at: now - 500),
            Scenario.push("throttled", "t1", at: now - 400, status: 429, reason: "TooManyRequests"),
            Self.started("heavy", at: now - 500),
            Self.started("frozen", at: now - 500),
            // Two days ahead: the phone applies it and then ignores every correct update.
            Scenario.push("frozen", "f1", at: now - 300, timestamp: now + 2 * 86_400, content: Scenario.ride(0.5, 5)),
            Self.started("soon-stale", at: now - 100, staleDate: now + 120),
        ]
        for i in 0..<4 { events.append(Scenario.push("heavy", "h\(i)", at: now - 200 + Double(i), content: Scenario.ride(0.2, 8))) }
        #expect(try server.post(events: events).status == 200)

        var g = Self.groups(try server.json("/api/triage"))
        #expect(g["stale"]?.count == 1 && g["stale"]?.ids == ["stale"])
        #expect(g["token_invalidated"]?.ids == ["dead"])
        #expect(g["last_push_failed"]?.ids == ["throttled"])
        #expect(g["priority10_heavy"]?.ids == ["heavy"])
        #expect(g["future_timestamp"]?.ids == ["frozen"])
        #expect(Set(g.keys) == Set(TriageProblem.allCases.map(\.rawValue)), "every group, even an empty one")

        let answer = try server.json("/api/triage")
        let dead = answer["problems"]?.arrayValue?.first { $0["problem"] == "token_invalidated" }
        #expect(dead?["title"] == "token invalidated by APNs")
        #expect(dead?["activities"]?[0]?["booking_id"] == "BK-dead")
        #expect(dead?["activities"]?[0]?["detail"] == "APNs answered Unregistered")

        // Three minutes on: the second card's stale date passes; an hour on, the priority-10
        // pushes leave the window.
        server.time.advance(by: 180)
        g = Self.groups(try server.json("/api/triage"))
        #expect(g["stale"]?.count == 2 && g["stale"]?.ids == ["soon-stale", "stale"], "newest start first")
        server.time.advance(by: 3600)
        g = Self.groups(try server.json("/api/triage"))
        #expect(g["priority10_heavy"]?.count == 0)

        // A limit cuts the lists, never the counts.
        g = Self.groups(try server.json("/api/triage?limit=1"))
        #expect(g["stale"]?.count == 2 && g["stale"]?.ids == ["soon-stale"])
        for bad in ["0", "501", "x"] { #expect(try server.get("/api/triage?limit=" + bad).status == 400) }
    }

    @Test func theTriageIsBehindTheReadToken() throws {
        let server = try TestServer { $0.readToken = "s3cret" }
        defer { server.stop() }
        #expect(try server.get("/api/triage").status == 401)
        #expect(try server.get("/api/triage", token: "s3cret").status == 200)
    }
}
