import Foundation
import JSON
import Synchronization
import Testing
@testable import LiveActivityMonitor

/// Issue 21, item 2: each attributes type's content shape, learned from what the app encodes
/// or declared by a template, and pushes the phone could not decode (DESIGN.md section 4).
/// Live: the real server on a real SQLite file.
@Suite struct ContentShapeTests {
    static let t0 = TestServer.base
    static let token = Scenario.tokenA

    static func start(_ id: String, type: String, content: [String: Any], at: Double = t0 - 600,
                      source: String = "app") -> JSONValue {
        JSONValue(["type": "activity.started", "activity_id": id, "booking_id": "BK-\(id)", "attributes_type": type,
                   "occurred_at": at, "content_state": content, "push_token": token, "source": source] as [String: Any])
    }

    static func push(_ id: String, _ key: String, at: Double, _ content: Any, event: String = "update") -> JSONValue {
        JSONValue(["id": key, "type": "push.sent", "activity_id": id, "occurred_at": at, "event": event, "status": 200,
                   "latency_ms": 30, "push_token": token, "timestamp": at, "content_state": content] as [String: Any])
    }

    /// The shape `/api/shapes` gives a type, with where it comes from.
    static func shape(_ server: TestServer, _ type: String) throws -> (shape: JSONValue?, source: String?, learned: JSONValue?) {
        let all = try server.json("/api/shapes")["shapes"]?.arrayValue ?? []
        let entry = all.first { $0["attributes_type"]?.stringValue == type }
        return (entry?["shape"], entry?["source"]?.stringValue, entry?["learned"])
    }

    /// (result, why, detail) of each event of an activity, in the read API's order.
    static func effects(_ server: TestServer, _ id: String) throws -> [[String?]] {
        (try server.json("/api/activities/\(id)")["events"]?.arrayValue ?? []).map { event in
            let effect = event["effect"]
            return [effect?["result"]?.stringValue, effect?["why"]?.stringValue, effect?["detail"]?.stringValue]
        }
    }

    static let undecodable = "liveactivity_pushes_without_effect_total{why=\"undecodable_content\"}"

    static let delivery = "DeliveryAttributes"
    /// Two contents the app encoded: optional keys (absent in one, null in one, first seen in
    /// the second), a nested object, an array of objects, a key only ever null.
    static var first: [String: Any] { ["eta": 7, "courier": ["name": "Bo", "rating": "4.8"],
                                       "stops": [["city": "Oslo", "note": NSNull()]], "tip": NSNull()] }
    static var second: [String: Any] { ["eta": 9, "courier": ["name": "Al", "rating": "5.0", "vehicle": "bike"],
                                        "stops": [["city": "Bergen"], ["city": "Molde", "note": "ring"]], "promo": "X"] }
    static let learned: JSONValue = .object(JSONObject([
        ("courier", "object"), ("courier.name", "string"), ("courier.rating", "string"), ("courier.vehicle", "string?"),
        ("eta", "number"), ("promo", "string?"),
        ("stops", "array"), ("stops[]", "object"), ("stops[].city", "string"), ("stops[].note", "string?"),
        ("tip", "any?"),
    ]))

    /// The text a template declares and `/api/shapes` serves reads back to the same shape:
    /// nested objects, arrays of arrays, optional kinds, unions, keys with `.` and `[`.
    @Test func theShapeTextReadsBackAsWritten() throws {
        let text: JSONObject = [
            "a\\.b": "bool", "grid": "array?", "grid[]": "array", "grid[][]": "number|string",
            "route": "object", "route.legs[]": "object", "route.legs[].to": "string?", "when": "any",
        ]
        guard case .success(let shape) = ObjectShape.parse(text) else { Issue.record("not read"); return }
        #expect(shape.fields["a.b"]?.kinds == [.bool])
        #expect(shape.fields["route"]?.object?.fields["legs"]?.element?.shape.object?.fields["to"]?.optional == true)
        let written = shape.text
        #expect(Set(written.keys) == Set(text.keys) .union(["route.legs"]), "\(written)")
        guard case .success(let again) = ObjectShape.parse(written) else { Issue.record("not read again"); return }
        #expect(again == shape)
        for bad: JSONObject in [["": "string"], ["a..b": "string"], ["a[": "string"], ["a[]b": "string"],
                                ["a": "text"], ["a": "null"], ["a": 1]] {
            if case .success = ObjectShape.parse(bad) { Issue.record("\(bad) read") }
        }
        // Judged as the phone decodes: a required key of a missing optional parent is not missing.
        #expect(shape.problems(in: ["a.b": true, "route": .object(["legs": .array([.object([:])])]), "when": .null]) == [])
        #expect(shape.problems(in: ["a.b": 1, "route": .object(["legs": .object([:])]), "grid": .array([.array(["x", .bool(true)])])])
                == ["`a.b`: number where the app sends a bool", "`grid[0][1]`: bool where the app sends a number or a string",
                    "`route.legs`: object where the app sends an array", "`when` missing"])
    }

    @Test func aShapeIsLearnedFromTheAppsContentsAndJudgesPushes() throws {
        let server = try TestServer()
        defer { server.stop() }
        // Before any app-reported content the type has no shape: anything is applied.
        #expect(try server.post(events: [Self.start("early", type: Self.delivery, content: ["eta": 1], source: "push_to_start"),
                                         Self.push("early", "e1", at: Self.t0 - 590, ["eta": "soon"])]).status == 200)
        #expect(try Self.effects(server, "early").map { $0[0] } == ["applied", "applied"])
        #expect(try Self.shape(server, Self.delivery).shape == nil, "a push-to-start's content was not encoded by the app")
        let templates = Double(TestServer.templateCount)
        #expect(try server.metric("liveactivity_content_shape_types") == templates, "the templates' only")

        #expect(try server.post(events: [Self.start("d1", type: Self.delivery, content: Self.first)]).status == 200)
        #expect(try server.post(events: [Self.start("d2", type: Self.delivery, content: Self.second)]).status == 200)
        let (shape, source, _) = try Self.shape(server, Self.delivery)
        #expect(shape == Self.learned, "\(shape?.jsonString ?? "none")")
        #expect(source == "app")
        #expect(try server.metric("liveactivity_content_shape_types") == templates + 1)

        let pushes: [(Any, String?)] = [
            (["eta": 5, "courier": ["name": "Bo", "rating": "4.8"], "stops": [], "tip": 3], nil),
            (["eta": 5, "courier": ["name": "Bo", "rating": 4.8], "stops": []], "`courier.rating`: number where the app sends a string"),
            (["eta": 5, "courier": ["name": "Bo", "rating": "4.8"], "stops": [["city": "Oslo"], ["city": NSNull()]]],
             "`stops[1].city`: null where the app sends a string"),
            (["courier": ["name": "Bo", "rating": "4.8"], "stops": []], "`eta` missing"),
            (["eta": 4, "courier": ["name": "Bo", "rating": "4.8", "vehicle": NSNull()], "stops": [["city": "Oslo", "note": NSNull()]],
              "promo": NSNull(), "extra": true], nil),
            (["eta": "3", "courier": ["name": "Bo"], "stops": "Oslo"],
             "`courier.rating` missing; `eta`: string where the app sends a number; `stops`: string where the app sends an array"),
        ]
        for (i, (content, _)) in pushes.enumerated() {
            #expect(try server.post(events: [Self.push("d1", "p\(i)", at: Self.t0 - 500 + Double(i), content)]).status == 200)
        }
        let effects = try Self.effects(server, "d1").dropFirst()
        #expect(effects.map { $0[2] } == pushes.map(\.1))
        #expect(effects.map { $0[1] } == pushes.map { $0.1 == nil ? nil : "undecodable_content" })
        #expect(try server.metric(Self.undecodable) == 4)
        // The lock screen keeps the last content that decoded.
        #expect(try server.json("/api/activities/d1")["content_state"] == JSONValue(pushes[4].0))
    }

    @Test func aDeclaredShapeWinsAndADateSentAsTextDoesNotDecode() throws {
        let server = try TestServer()
        defer { server.stop() }
        let ride = try Self.shape(server, "LiveActivityAttributes")
        #expect(ride.source == "template")
        #expect(ride.shape == .object(JSONObject([("driverName", "string"), ("duration", "number"), ("progress", "number"),
                                                  ("rating", "string")])))
        #expect(ride.learned == .null, "nothing learned yet")
        // The app reports a rating as a number: learned, but the declaration stands.
        var odd = Scenario.ride(0.1, 9)
        odd["rating"] = 4.9
        #expect(try server.post(events: [Self.start("r1", type: "LiveActivityAttributes", content: odd)]).status == 200)
        #expect(try Self.shape(server, "LiveActivityAttributes").learned?["rating"] == "number")
        #expect(try server.post(events: [Self.push("r1", "r-ok", at: Self.t0 - 500, Scenario.ride(0.4, 6)),
                                         Self.push("r1", "r-no", at: Self.t0 - 400, odd)]).status == 200)
        #expect(try Self.effects(server, "r1").map { $0[2] }
                == [nil, nil, "`rating`: number where the app sends a string"])

        // The timer's `startedAt` is an optional Date: seconds since 2001, or nothing.
        let timer = "TimerWidgetAttributes"
        #expect(try server.post(events: [Self.start("t1", type: timer, content: [:]),
                                         Self.push("t1", "t-none", at: Self.t0 - 500, [String: Any]()),
                                         Self.push("t1", "t-date", at: Self.t0 - 400, ["startedAt": 786_000_000.5]),
                                         Self.push("t1", "t-iso", at: Self.t0 - 300, ["startedAt": "2026-11-29T14:03:00Z"]),
                                         Self.push("t1", "t-end", at: Self.t0 - 200, ["startedAt": "2026-11-29T14:03:00Z"],
                                                   event: "end")]).status == 200)
        let effects = try Self.effects(server, "t1")
        #expect(effects.map { $0[0] } == ["applied", "applied", "applied", "no_effect", "no_effect"])
        #expect(effects.last?[2] == "`startedAt`: string where the app sends a number")
        let activity = try server.json("/api/activities/t1")
        #expect(activity["state"] == "active", "an end the phone cannot decode ends nothing")
        #expect(activity["content_state"] == .object(["startedAt": .number(JSONNumber(786_000_000.5))]))
        #expect(try server.metric(Self.undecodable) == 3)
    }

    @Test func aPushToStartThePhoneCannotDecodeStartsNothing() throws {
        let server = try TestServer()
        defer { server.stop() }
        func start(_ key: String, _ content: [String: Any]) -> JSONValue {
            JSONValue(["id": key, "type": "push.sent", "event": "start", "activity_id": key, "booking_id": "BK-\(key)",
                       "occurred_at": Self.t0 - 60, "status": 200, "latency_ms": 30, "push_token": Self.token,
                       "attributes_type": "LiveActivityAttributes", "content_state": content,
                       "alert": ["title": "Ride", "body": "On the way"]] as [String: Any])
        }
        var bad = Scenario.ride(0, 9)
        bad["duration"] = nil
        #expect(try server.post(events: [start("good", Scenario.ride(0, 9)), start("bad", bad)]).status == 200)
        #expect(try server.get("/api/activities/good").status == 200)
        #expect(try server.get("/api/activities/bad").status == 404)
        let booking = try server.json("/api/bookings/BK-bad")
        #expect(booking["events"]?.arrayValue?.first?["effect"]?["detail"] == "`duration` missing")
        #expect(booking["events"]?.arrayValue?.first?["effect"]?["text"]
                == "no effect: the phone cannot decode its content: `duration` missing", "the words support reads")
    }

    /// The verdict is the writer's at commit time: a later lesson (the app turns out to send
    /// `eta` as text too) changes how later pushes are judged, never what an earlier one did —
    /// not in the read API's replay, not after a restart.
    @Test func shapesAndVerdictsSurviveARestartAndLaterLessons() throws {
        let directory = TestServer.makeTemporaryDirectory()
        let server = try TestServer(directory: directory)
        defer { server.stop() }
        let type = "CourierAttributes"
        #expect(try server.post(events: [Self.start("c1", type: type, content: ["eta": 7]),
                                         Self.push("c1", "c-text", at: Self.t0 - 500, ["eta": "7 min"])]).status == 200)
        let verdict: [[String?]] = [["applied", nil, nil], ["no_effect", "undecodable_content", "`eta`: string where the app sends a number"]]
        #expect(try Self.effects(server, "c1") == verdict)

        try server.restart()
        #expect(try Self.shape(server, type).shape == .object(["eta": "number"]))
        #expect(try Self.effects(server, "c1") == verdict)
        #expect(try server.metric(Self.undecodable) == 1)
        #expect(try server.metric("liveactivity_content_shape_types") == Double(TestServer.templateCount + 1))

        // Another booking's app content teaches that `eta` may be text.
        #expect(try server.post(events: [Self.start("c2", type: type, content: ["eta": "soon"]),
                                         Self.push("c1", "c-text-2", at: Self.t0 - 400, ["eta": "6 min"])]).status == 200)
        #expect(try Self.shape(server, type).shape == .object(["eta": "number|string"]))
        #expect(try Self.effects(server, "c1") == verdict + [["applied", nil, nil]], "the first verdict stands")
        try server.restart()
        #expect(try Self.effects(server, "c1") == verdict + [["applied", nil, nil]])
        #expect(try server.json("/api/activities/c1")["content_state"] == .object(["eta": "6 min"]))
        #expect(try server.metric(Self.undecodable) == 1)
    }

    /// After a crash the events since the tables last caught up are replayed at start: with
    /// their stored verdicts, so the activity and the counters are what the server had.
    @Test func aCrashReplaysTheStoredVerdicts() throws {
        let server = try TestServer { $0.catchUpInterval = 3600 }   // behind until told
        defer { server.stop() }
        let type = "CourierAttributes"
        #expect(try server.post(events: [Self.start("k1", type: type, content: ["eta": 7])]).status == 200)
        server.server.store.catchUp()
        #expect(try server.post(events: [Self.push("k1", "k-ok", at: Self.t0 - 500, ["eta": 6])]).status == 200)
        #expect(try server.post(events: [Self.push("k1", "k-bad", at: Self.t0 - 400, ["eta": "5"])]).status == 200)
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let expected = try ReplayTests.crashImage(of: server, to: directory + "/monitor.sqlite", ids: ["k1"])

        let logged = Mutex<[String]>([])
        let again = try TestServer(now: server.time.value, directory: directory) { c in
            c.log = { line in logged.withLock { $0.append(line) } }
        }
        defer { again.stop() }
        #expect(logged.withLock { $0 }.contains { $0.contains("replayed 2 events") }, "\(logged.withLock { $0 })")
        #expect(try ReplayTests.state(of: again.server.store, ids: ["k1"]).records == expected.records)
        #expect(try again.json("/api/activities/k1")["content_state"] == .object(["eta": 6]))
        #expect(try again.metric(Self.undecodable) == 1)
        #expect(try Self.effects(again, "k1").last == ["no_effect", "undecodable_content", "`eta`: string where the app sends a number"])
    }

    /// A key with a control character in it (JSON allows U+0000 in a key) is named in the
    /// verdict by its escape, on both stores: PostgreSQL's text cannot hold U+0000, and the raw
    /// key made every commit holding such a verdict fail there (503, for ever, with every request
    /// that shared its commit).
    @Test(arguments: [false, true]) func aKeyWithAControlCharacterIsNamedByItsEscape(postgres: Bool) throws {
        let uri = postgres ? try PostgresCluster.database() : nil
        let server = try TestServer { c in if let uri { c.databasePath = uri } }
        defer { server.stop() }
        #expect(try server.post(events: [Self.start("nul-1", type: "NulKeyAttributes", content: ["a\u{0}b": "x", "q": 1])]).status == 200)
        let push = try server.post(events: [Self.push("nul-1", "nul-push", at: Self.t0 - 60, ["q": 1])])
        #expect(push.status == 200, "\(push.text)")
        #expect(try Self.effects(server, "nul-1").last == ["no_effect", "undecodable_content", "`a\\u0000b` missing"])
        try server.restart()
        #expect(try Self.effects(server, "nul-1").last?[2] == "`a\\u0000b` missing")
    }
}
