import Foundation
import JSON
import Testing
@testable import LiveActivityMonitor

/// Issue 19, item 3: memory holds at most `--max-live-activities` live activities; the
/// oldest-started beyond it leave memory, counted, and stay stored and usable.
@Suite struct LiveActivityLimitTests {
    static func liveInGauge(_ server: TestServer) throws -> Double {
        let text = try server.get("/metrics").text
        return text.split(separator: "\n").filter { $0.hasPrefix("liveactivity_activities{") }
            .compactMap { Double($0.split(separator: " ").last ?? "") }.reduce(0, +)
    }

    @Test func theOldestStartedLeaveMemoryAndStayStored() throws {
        let server = try TestServer { $0.maxLiveActivities = 100 }
        defer { server.stop() }
        let t = TestServer.base - 3600
        let starts = (0..<150).map { IngestTests.started("lim-\($0)", at: t + Double($0)) }
        #expect(try server.post(events: starts).status == 200)
        // New activities make the commit catch the tables up; then 150 > 100: down to 95.
        #expect(try Self.liveInGauge(server) == 95)
        #expect(try server.metric("liveactivity_activities_evicted_total") == 55)
        guard case .array(let wall)? = try server.json("/api/activities?limit=1000")["activities"] else {
            Issue.record("no wall")
            return
        }
        #expect(wall.count == 95)
        #expect(!wall.contains { $0["activity_id"]?.stringValue == "lim-0" }, "the oldest-started left")
        // Still stored: its history reads, and a push to it applies from its row.
        #expect(try server.get("/api/activities/lim-0").status == 200)
        let push = Scenario.push("lim-0", "p-lim-0", at: t + 500, token: IngestTests.token, content: ["startedAt": 7])
        #expect(try server.post(events: [push]).status == 200)
        let lim0 = try server.json("/api/activities/lim-0")
        #expect(lim0["content_state"]?["startedAt"] == JSONValue(7))
        #expect(lim0["last_push"]?["status"] == JSONValue(200))
        // After a restart memory takes the newest-started, as many as it holds.
        try server.restart()
        #expect(try Self.liveInGauge(server) == 100)
        #expect(try server.metric("liveactivity_activities_evicted_total") == 0, "counted since start")
    }
}
