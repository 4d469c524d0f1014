import Foundation
import JSON
import Testing
@testable import LiveActivityMonitor

/// `/metrics` over the PostgreSQL store: the golden exposition (the same file as over SQLite)
/// and a restart that changes no metric, rebuilt from the tables.
@Suite struct PostgresMetricsTests {
    @Test func goldenExposition() throws {
        try withPostgresInProcessMonitor { monitor in
            let m = TestedMonitor(monitor)
            #expect(try m.post(events: Scenario.events).text == #"{"accepted":16,"duplicates":0}"#)
            let response = try m.get("/metrics")
            #expect(response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
            let golden = try String(contentsOfFile: MetricsTests.goldenPath, encoding: .utf8)
            #expect(MetricsText.dataOnly(response.text) == golden)
        }
    }

    /// The same over HTTP, from the server `serve --db postgres://…` runs (`MonitorServer`).
    @Test func goldenExpositionOverHTTP() throws {
        let uri = try PostgresCluster.database()
        try withTestServer(configure: { $0.databasePath = uri }) { server in
            #expect(try server.post(events: Scenario.events).text == #"{"accepted":16,"duplicates":0}"#)
            let golden = try String(contentsOfFile: MetricsTests.goldenPath, encoding: .utf8)
            #expect(MetricsText.dataOnly(try server.get("/metrics").text) == golden)
        }
    }

    @Test func restartChangesNoMetricAndKeepsDuplicates() throws {
        let first = try PostgresInProcessMonitor()
        let m = TestedMonitor(first)
        _ = try m.post(events: Scenario.events)
        let before = MetricsText.dataOnly(try m.get("/metrics").text, keepHTTP: false)
        let booking = try m.get("/api/bookings/BK-1042").text
        first.stop()

        let second = try PostgresInProcessMonitor(uri: first.uri)
        defer { second.stop() }
        let again = TestedMonitor(second)
        #expect(MetricsText.dataOnly(try again.get("/metrics").text, keepHTTP: false) == before)
        #expect(try again.get("/api/bookings/BK-1042").text == booking)
        #expect(try again.post(events: Scenario.events).text == #"{"accepted":0,"duplicates":16}"#)
        #expect(try again.metric("liveactivity_ingest_events_total{type=\"push.sent\"}") == 11)
    }
}
