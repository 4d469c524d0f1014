import Foundation
import JSON
import Testing
@testable import LiveActivityMonitor

/// `/metrics` as a whole: a golden text, promtool, restart stability, concurrency.
@Suite struct MetricsTests {
    static let goldenPath = TestServer.repositoryRoot + "/Tests/LiveActivityMonitorTests/Fixtures/metrics.golden"

    @Test func goldenExposition() throws {
        let server = try TestServer()
        defer { server.stop() }
        let r = try server.post(events: Scenario.events)
        #expect(r.text == #"{"accepted":16,"duplicates":0}"#)
        let response = try server.get("/metrics")
        #expect(response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        let text = MetricsText.dataOnly(response.text)
        if ProcessInfo.processInfo.environment["LAM_UPDATE_GOLDEN"] == "1" {
            try text.write(toFile: Self.goldenPath, atomically: true, encoding: .utf8)
        }
        let golden = try String(contentsOfFile: Self.goldenPath, encoding: .utf8)
        #expect(text == golden, "regenerate with LAM_UPDATE_GOLDEN=1 swift test --filter goldenExposition, then review the diff")
    }

    @Test func promtoolFindsNothing() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.post(events: Scenario.events)
        let text = try server.get("/metrics").text
        let (status, output) = try Promtool.checkMetrics(text)
        #expect(status == 0 && output.isEmpty, "promtool check metrics: \(output)")
    }

    @Test func restartChangesNoMetricAndKeepsDuplicates() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.post(events: Scenario.events)
        let before = MetricsText.dataOnly(try server.get("/metrics").text, keepHTTP: false)
        let booking = try server.get("/api/bookings/BK-1042").text
        try server.restart()
        let after = MetricsText.dataOnly(try server.get("/metrics").text, keepHTTP: false)
        #expect(before == after)
        #expect(try server.get("/api/bookings/BK-1042").text == booking)
        #expect(try server.post(events: Scenario.events).text == #"{"accepted":0,"duplicates":16}"#)
        #expect(try server.metric("liveactivity_ingest_events_total{type=\"push.sent\"}") == 11)
    }

    @Test func timeAloneMovesGaugesAndCounters() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.post(events: [IngestTests.started("t", at: TestServer.base)])
        let active = "liveactivity_activities{attributes_type=\"TimerWidgetAttributes\",state=\"active\"}"
        let ended = "liveactivity_activities{attributes_type=\"TimerWidgetAttributes\",state=\"ended\"}"
        #expect(try server.metric(active) == 1)
        server.time.advance(by: 8 * 3600)
        #expect(try server.metric(active) == 0)
        #expect(try server.metric(ended) == 1)
        #expect(try server.metric("liveactivity_activities_ended_total{attributes_type=\"TimerWidgetAttributes\",by=\"system\"}") == 1)
        server.time.advance(by: 4 * 3600)
        #expect(try server.metric(ended) == 0)
        #expect(try server.metric("liveactivity_activities_dismissed_total{attributes_type=\"TimerWidgetAttributes\"}") == 1)
        try server.restart()
        #expect(try server.metric("liveactivity_activities_dismissed_total{attributes_type=\"TimerWidgetAttributes\"}") == 1)
        // Its row says dismissed: start-up does not load it as live again.
        #expect(try server.metric(ended) == 0)
        #expect(server.server.store.state.withLock { $0.records.count } == 0)
    }

    @Test func manyConcurrentClientsEveryAcknowledgedEventOnce() throws {
        let server = try TestServer()
        defer { server.stop() }
        let clients = 16, requests = 25
        let port = server.server.port
        let acknowledged = LockedCounter()
        DispatchQueue.concurrentPerform(iterations: clients) { c in
            let client = HTTPClientFactory.make(port: port)
            for r in 0..<requests {
                let id = "c\(c)-r\(r)"
                // Each request: one new activity plus a replay of the previous request's event.
                var events = [IngestTests.started(id, eventID: id)]
                if r > 0 { events.append(IngestTests.started("c\(c)-r\(r - 1)", eventID: "c\(c)-r\(r - 1)")) }
                let body = JSONValue.array(events).jsonString
                if let response = try? client.request("POST", "/v1/events", headers: [("Content-Type", "application/json")],
                                                      body: Array(body.utf8)), response.status == 200 {
                    acknowledged.add(Int(try! JSONParser.parse(response.body)["accepted"]!.doubleValue!))
                }
            }
        }
        #expect(acknowledged.value == clients * requests)
        #expect(try server.metric("liveactivity_ingest_events_total{type=\"activity.started\"}") == Double(clients * requests))
        #expect(try server.metric("liveactivity_ingest_duplicates_total") == Double(clients * (requests - 1)))
        let counts = try server.json("/api/activities?limit=1")["counts"]
        #expect(counts?["active"] == JSONValue(clients * requests))
    }
}
