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
            let ids = (group["items"]?.arrayValue ?? []).compactMap { $0["activity_id"]?.stringValue }
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
        #expect(dead?["items"]?[0]?["booking_id"] == "BK-dead")
        #expect(dead?["items"]?[0]?["detail"] == "APNs answered Unregistered")

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

    /// What only the phone reveals: a push it cannot decode, a push it never showed, and a start
    /// push that started nothing — each in its group, naming its booking, kept across a restart.
    @Test func whatOnlyThePhoneRevealsIsGroupedAndSurvivesARestart() throws {
        typealias D = DeliveryAndPushToStartTests
        let server = try TestServer()
        defer { server.stop() }
        let t0 = D.t0
        guard case .object(var undecodable) = D.update("U1", at: t0 + 20, progress: 0.3) else { return }
        undecodable["content_state"] = ["driverName": "Ana", "rating": 4.9, "progress": 0.3, "duration": 7]
        #expect(try server.post(events: [
            D.started("U1", "BK-U1", at: t0, source: "app"), .object(undecodable),
            D.started("M1", "BK-M1", at: t0, source: "app"), D.update("M1", at: t0 + 10, progress: 0.5),
            D.startPush("BK-S1", at: t0),
        ]).status == 200)
        server.time.set(t0 + 400)
        #expect(try server.post(events: [D.observed("M1", at: t0 + 400, progress: 0)]).status == 200)
        server.time.set(t0 + 901)  // the start push's window has passed

        for round in ["before", "after a restart"] {
            let answer = try server.json("/api/triage")
            let g = Self.groups(answer)
            #expect(g["undecodable_push"]?.ids == ["U1"], "\(round)")
            #expect(g["missed_delivery"]?.ids == ["M1"], "\(round)")
            let start = answer["problems"]?.arrayValue?.first { $0["problem"] == "start_not_started" }
            #expect(start?["count"] == 1, "\(round)")
            #expect(start?["items"]?[0]?["booking_id"] == "BK-S1" && start?["items"]?[0]?["activity_id"] == .null, "\(round)")
            #expect(start?["items"]?[0]?["detail"]?.stringValue?.hasSuffix("started nothing within 15 min") == true, "\(round)")
            let bad = answer["problems"]?.arrayValue?.first { $0["problem"] == "undecodable_push" }
            #expect(bad?["items"]?[0]?["detail"]?.stringValue?.hasSuffix("`rating`: number where the app sends a string") == true,
                    "\(round): \(bad?["items"]?[0]?["detail"] ?? .null)")
            if round == "before" { try server.restart() }
        }

        #expect(try server.json("/api/activities/U1")["undecodable"]?["detail"] == "`rating`: number where the app sends a string")
        // A decodable push newer than the bad one puts the card right: the problem is gone.
        #expect(try server.post(events: [D.update("U1", at: t0 + 902, progress: 0.9)]).status == 200)
        #expect(Self.groups(try server.json("/api/triage"))["undecodable_push"]?.count == 0)
        #expect(try server.json("/api/activities/U1")["undecodable"] == .null)
        // A day after its window, a start push that started nothing leaves the list.
        server.time.set(t0 + 901 + 86_400)
        #expect(Self.groups(try server.json("/api/triage"))["start_not_started"]?.count == 0)
    }
}
