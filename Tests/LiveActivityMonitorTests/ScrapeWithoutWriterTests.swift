import Foundation
import HTTPServer
import JSON
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// A scrape never waits for the writer (issue 20, item 4): time's transitions are the writer's
/// to apply, on its own timer or when a manual clock moves.
@Suite struct ScrapeWithoutWriterTests {
    @Test func aScrapeAnswersWhileTheWriterIsBlockedAndADeadlineIsDue() throws {
        let server = try TestServer { $0.clock = .system }
        defer { server.stop() }
        let now = Date().timeIntervalSince1970
        let start = Self.stale(IngestTests.started("due-1", at: now - 1), at: now + 0.5)
        #expect(try server.post(events: [start]).status == 200)

        // Another connection holds the write lock: the writer's next commit waits for it.
        let holder = try Database(path: server.configuration.databasePath)
        try holder.execute("BEGIN IMMEDIATE")
        let ingestDone = Locked(false)
        let port = server.server.port
        let blocked = Thread {
            _ = try? HTTPClient(port: port).request("POST", "/v1/events", headers: [("Content-Type", "application/json")],
                                                   body: Array(JSONValue.array([IngestTests.started("late-1")]).jsonString.utf8))
            ingestDone.withLock { $0 = true }
        }
        blocked.start()
        Thread.sleep(forTimeInterval: 1)   // the stale date passes; the ingest waits in the writer

        let metrics = try server.get("/metrics")
        let answeredFirst = !ingestDone.withLock { $0 }
        try holder.execute("COMMIT")
        #expect(metrics.status == 200)
        #expect(answeredFirst, "the scrape waited for the blocked writer")
        #expect(MetricsText.value(of: "liveactivity_activities{attributes_type=\"TimerWidgetAttributes\",state=\"stale\"}",
                                  in: metrics.text) == 1, "gauges are computed at the scrape's now")
    }

    @Test func movingAManualClockAppliesTimeBeforeItReturns() throws {
        let server = try TestServer()
        defer { server.stop() }
        let start = Self.stale(IngestTests.started("m-1", at: TestServer.base), at: TestServer.base + 10)
        #expect(try server.post(events: [start]).status == 200)
        server.time.advance(by: 11)
        // Read from the table, not /metrics: the sweep was the clock's doing, not the scrape's.
        let db = try Database(path: server.configuration.databasePath)
        let stored = try db.scalar("SELECT reported_stale + stale_counted FROM activities WHERE activity_id = 'm-1'")
        #expect(stored?.int64Value ?? 0 >= 1, "the move swept and the sweep caught the tables up")
        #expect(try server.metric("liveactivity_stale_transitions_total{attributes_type=\"TimerWidgetAttributes\"}") == 1)
    }

    static func stale(_ event: JSONValue, at date: Double) -> JSONValue {
        guard case .object(var object) = event else { return event }
        object["stale_date"] = .number(JSONNumber(date))
        return .object(object)
    }
}
