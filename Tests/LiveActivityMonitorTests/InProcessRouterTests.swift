import Foundation
import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// The in-process tier: the router `buildMonitor` builds, called with built requests (no
/// socket), over a real SQLite store and again over a PostgreSQL one (the private test
/// cluster). The assertions of a handful of live tests (IngestTests, ReadAPITests,
/// MetricsTests), here in milliseconds; the live ones stay, for what only the HTTP layer does
/// (security headers, framing, early 413 and 415, keep-alive).
@Suite struct InProcessRouterTests {
    /// Runs `body` over the SQLite store, then over the PostgreSQL one: the same contract.
    static func run<R>(configure: (inout MonitorConfiguration) -> Void = { _ in },
                       _ body: (TestedMonitor) throws -> R) throws -> R {
        _ = try MonitorTier.postgres.run(configure: configure, body)
        return try MonitorTier.inProcess.run(configure: configure, body)
    }

    /// Nothing was stored: no event counted, no activity listed.
    static func expectNothingStored(_ monitor: TestedMonitor) throws {
        let text = try monitor.get("/metrics").text
        for type in EventType.allCases {
            #expect(MetricsText.value(of: "liveactivity_ingest_events_total{type=\"\(type.rawValue)\"}", in: text) == 0)
        }
        #expect(try monitor.json("/api/activities")["activities"] == .array([]))
    }

    // MARK: Ingest (IngestTests)

    @Test func acceptsObjectArrayAndNDJSON() throws {
        try Self.run { (m) throws in
            #expect(try m.post(IngestTests.started("a").jsonString).text == #"{"accepted":1,"duplicates":0}"#)
            #expect(try m.post(events: [IngestTests.started("b"), IngestTests.started("c")]).text
                    == #"{"accepted":2,"duplicates":0}"#)
            let ndjson = IngestTests.started("d").jsonString + "\n\n" + IngestTests.started("e").jsonString + "\n"
            #expect(try m.post(ndjson, contentType: "application/x-ndjson").text == #"{"accepted":2,"duplicates":0}"#)
            #expect(try m.json("/api/activities")["counts"]?["active"] == JSONValue(5))
        }
    }

    @Test func repeatedIDIsADuplicateCountedOnce() throws {
        try Self.run { (m) throws in
            #expect(try m.post(events: [IngestTests.started("a", eventID: "e1")]).text == #"{"accepted":1,"duplicates":0}"#)
            #expect(try m.post(events: [IngestTests.started("a", eventID: "e1"), IngestTests.started("a", eventID: "e1")]).text
                    == #"{"accepted":0,"duplicates":2}"#)
            #expect(try m.metric("liveactivity_ingest_duplicates_total") == 2)
            #expect(try m.metric("liveactivity_ingest_events_total{type=\"activity.started\"}") == 1)
        }
    }

    @Test(arguments: IngestTests.badInputs)
    func badInputIsRefusedAndNothingStored(_ input: IngestTests.BadInput) throws {
        try Self.run { (m) throws in
            let r = try m.post(input.body, contentType: input.contentType)
            #expect(r.status == input.status, "\(input.name): \(r.text)")
            #expect(r.text.contains(input.message), "\(input.name): \(r.text)")
            #expect(r.headers["content-type"] == "application/json")
            try Self.expectNothingStored(m)
            #expect(try m.get("/-/healthy").status == 200)
        }
    }

    @Test func invalidEventsAreAllNamedAndNoneStored() throws {
        try Self.run { (m) throws in
            let r = try m.post(events: [
                IngestTests.started("ok"),
                JSONValue(["type": "activity.started", "activity_id": "x", "occurred_at": "yesterday"] as [String: Any]),
                JSONValue(["type": "activity.teleported", "occurred_at": TestServer.base] as [String: Any]),
            ])
            #expect(r.status == 422)
            let errors = try JSONParser.parse(r.body)["errors"]?.arrayValue ?? []
            #expect(!errors.contains { $0["index"] == JSONValue(0) }, "the valid event is not blamed")
            #expect(errors.contains { $0["index"] == JSONValue(1) && $0["field"]?.stringValue == "occurred_at" })
            #expect(errors.contains { $0["index"] == JSONValue(2) && $0["field"]?.stringValue == "type" })
            try Self.expectNothingStored(m)
            #expect(try m.metric("liveactivity_ingest_rejected_total{reason=\"invalid\"}") == 1)
        }
    }

    @Test func tokensAndHostsAreChecked() throws {
        try Self.run(configure: { $0.ingestToken = "ingest-secret-0123456789" }) { (m) throws in
            let body = IngestTests.started("a").jsonString
            let refused = try m.post(body)
            #expect(refused.status == 401 && refused.text == #"{"error":"unauthorized"}"#)
            #expect(refused.headers["www-authenticate"] == "Bearer")
            #expect(try m.post(body, token: "ingest-secret-0123456788").status == 401)
            #expect(try m.post(body, token: "ingest-secret-0123456789").status == 200)
            #expect(try m.metric("liveactivity_ingest_rejected_total{reason=\"unauthorized\"}") == 2)
            // No read token, bound to loopback: the read API answers loopback names only.
            #expect(try m.request("GET", "/api/activities", headers: [("Host", "localhost:9464")]).status == 200)
            #expect(try m.request("GET", "/api/activities", headers: [("Host", "attacker.example")]).status == 403)
        }
    }

    // MARK: Reads (ReadAPITests)

    @Test func unknownIDsAre404AndBadQueriesAre400() throws {
        try Self.run { (m) throws in
            #expect(try m.get("/api/activities/nope").status == 404)
            #expect(try m.get("/api/bookings/nope").status == 404)
            #expect(try m.get("/api/activities?limit=0").status == 400)
            #expect(try m.get("/api/activities?state=sleeping").status == 400)
            #expect(try m.get("/api/activities?cursor=garbage").status == 400)
            #expect(try m.get("/api/activities?q=" + String(repeating: "a", count: 129)).status == 400)
            #expect(try m.get("/api/activities?q=" + String(repeating: "a", count: 128)).status == 200)
            #expect(try m.get("/api/activities/a?at=yesterday").status == 400)
        }
    }

    /// The longest id an activity may have is a search that finds it, even where its lower case
    /// is longer (`İ`, two bytes, is three in lower case): the length is the typed query's.
    @Test func theLongestIDIsASearchThatFindsIt() throws {
        try Self.run { (m) throws in
            let id = String(repeating: "İ", count: 64)
            #expect(id.utf8.count == 128)
            let start = JSONValue(["type": "activity.started", "activity_id": id, "booking_id": "BK-longest",
                                   "attributes_type": "TimerWidgetAttributes", "occurred_at": TestServer.base - 60,
                                   "content_state": ["startedAt": TestServer.base - 60]] as [String: Any])
            #expect(try m.post(events: [start]).status == 200)
            let q = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let found = try JSONParser.parse(m.get("/api/activities?q=" + q).body)
            #expect(found["activities"]?.arrayValue?.map { $0["activity_id"]?.stringValue } == [id])
        }
    }

    @Test func pagesFollowThePhoneOrder() throws {
        try Self.run { (m) throws in
            try m.post(events: (0..<5).map { IngestTests.started("a\($0)", at: TestServer.base - 100 + Double($0)) })
            var ids: [String] = []
            var cursor: String?
            repeat {
                let page = try m.json("/api/activities?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""))
                ids += page["activities"]?.arrayValue?.compactMap { $0["activity_id"]?.stringValue } ?? []
                cursor = page["next_cursor"]?.stringValue
            } while cursor != nil
            #expect(ids == ["a4", "a3", "a2", "a1", "a0"])
        }
    }

    @Test func lastPushIsTheLatestSentAndTheBudgetIsStated() throws {
        try Self.run(configure: { $0.priority10Budget = 5 }) { (m) throws in
            let t = TestServer.base
            try m.post(events: [IngestTests.started("a", at: t - 600)])
            try m.post(events: (0..<8).map { Scenario.push("a", "p\($0)", at: t - 500 + Double($0) * 10, token: IngestTests.token) })
            try m.post(events: [Scenario.push("a", "late", at: t - 100, status: 410, reason: "Unregistered", token: IngestTests.token)])
            try m.post(events: [Scenario.push("a", "early", at: t - 300, token: IngestTests.token)])
            let activity = try m.json("/api/activities/a")
            #expect(activity["last_push"]?["status"] == JSONValue(410))
            #expect(activity["token"]?["invalidated"] == .bool(true))
            #expect(try m.metric("liveactivity_priority10_heavy_activities") == 1)
            #expect(try m.json("/api/activities")["priority10_budget"] == JSONValue(5))
            let booking = try m.json("/api/bookings/BK-a")
            #expect(booking["priority10_budget"] == JSONValue(5))
            #expect(booking["events"]?.arrayValue?.count == 11)
        }
    }

    @Test func dismissedActivitiesComeFromTheStore() throws {
        try Self.run { (m) throws in
            try m.post(events: [IngestTests.started("live"), IngestTests.started("gone"), ReadAPITests.dismissed("gone")])
            let page = try m.json("/api/activities?state=dismissed")
            #expect(page["activities"]?[0]?["activity_id"]?.stringValue == "gone")
            #expect(page["counts"]?["active"] == JSONValue(1))
            #expect(try m.json("/api/activities/gone")["state"]?.stringValue == "dismissed")
        }
    }

    // MARK: Routes

    @Test func methodsHealthAndRouteTemplates() throws {
        try Self.run { (m) throws in
            let put = try m.request("PUT", "/api/activities")
            #expect(put.status == 405 && put.headers["allow"] == "GET")
            let get = try m.request("GET", "/v1/events")
            #expect(get.status == 405 && get.headers["allow"] == "POST")
            #expect(try m.get("/-/healthy").text == "Healthy.\n")
            #expect(try m.get("/-/ready").text == "Ready.\n")
            #expect(try m.get("/api/activities/one%2Fwith%2Fslashes").status == 404)
            #expect(try m.get("/api/activities/two").status == 404)
            let text = try m.get("/metrics").text
            // Counted by route template, never by raw path.
            #expect(MetricsText.value(of: #"liveactivity_http_requests_total{code="404",handler="/api/activities/{activity_id}"}"#, in: text) == 2)
            #expect(MetricsText.value(of: #"liveactivity_http_requests_total{code="405",handler="/v1/events"}"#, in: text) == 1)
            #expect(!text.contains("one/with/slashes") && !text.contains("one%2F"))
        }
    }

    // MARK: Metrics (MetricsTests)

    /// The same golden text as the live test: the in-process tier renders `/metrics` exactly as
    /// the server does.
    @Test func metricsMatchTheGoldenFile() throws {
        try Self.run { (m) throws in
            #expect(try m.post(events: Scenario.events).text == #"{"accepted":16,"duplicates":0}"#)
            let response = try m.get("/metrics")
            #expect(response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
            let golden = try String(contentsOfFile: MetricsTests.goldenPath, encoding: .utf8)
            #expect(MetricsText.dataOnly(response.text) == golden, "regenerate with the live test: LAM_UPDATE_GOLDEN=1 swift test --filter goldenExposition")
            let (status, output) = try Promtool.checkMetrics(response.text)
            #expect(status == 0 && output.isEmpty, "promtool check metrics: \(output)")
        }
    }

    @Test func timeAloneMovesGaugesAndCounters() throws {
        try Self.run { (m) throws in
            try m.post(events: [IngestTests.started("t", at: TestServer.base)])
            let active = "liveactivity_activities{attributes_type=\"TimerWidgetAttributes\",state=\"active\"}"
            let ended = "liveactivity_activities{attributes_type=\"TimerWidgetAttributes\",state=\"ended\"}"
            #expect(try m.metric(active) == 1)
            m.time.advance(by: 8 * 3600)
            #expect(try m.metric(active) == 0)
            #expect(try m.metric(ended) == 1)
            #expect(try m.metric("liveactivity_activities_ended_total{attributes_type=\"TimerWidgetAttributes\",by=\"system\"}") == 1)
            m.time.advance(by: 4 * 3600)
            #expect(try m.metric(ended) == 0)
            #expect(try m.metric("liveactivity_activities_dismissed_total{attributes_type=\"TimerWidgetAttributes\"}") == 1)
        }
    }
}
