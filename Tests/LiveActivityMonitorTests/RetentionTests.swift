import Dispatch
import Foundation
import JSON
import Testing
@testable import LiveActivityMonitor

/// `prune` and `serve --retention`: old events and long-dismissed activities go, counters in
/// /metrics stay (also across a restart), live activities stay, ingest goes on meanwhile and the
/// database file stops growing.
@Suite struct RetentionTests {
    static let day = 86_400.0
    static let old = TestServer.base - 40 * day

    /// An activity from 40 days ago: started, updated, ended and dismissed at once.
    static func oldActivity(_ id: String, note: Int = 0) -> [JSONValue] {
        [
            JSONValue(["id": "\(id)-s", "type": "activity.started", "activity_id": id, "booking_id": "BK-\(id)",
                       "attributes_type": "TimerWidgetAttributes", "occurred_at": old,
                       "content_state": ["startedAt": old, "note": String(repeating: "n", count: note)]] as [String: Any]),
            JSONValue(["id": "\(id)-u", "type": "activity.updated", "activity_id": id, "occurred_at": old + 30,
                       "content_state": ["startedAt": old]] as [String: Any]),
            JSONValue(["id": "\(id)-e", "type": "activity.ended", "activity_id": id, "occurred_at": old + 60,
                       "dismissal_policy": "immediate"] as [String: Any]),
        ]
    }

    static func retention(_ server: TestServer) -> Retention {
        let store = server.server.store
        return Retention(path: server.configuration.databasePath, age: 30 * day, interval: 3600,
                         clock: server.configuration.clock, catchUp: { store.catchUp() }) { _ in }
    }

    static func eventCount(_ server: TestServer, _ path: String) throws -> Int? {
        guard case .array(let events)? = try server.json(path)["events"] else { return nil }
        return events.count
    }

    @Test func pruningKeepsEveryCounterAndEveryLiveActivity() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: Self.oldActivity("old-1")).status == 200)
        #expect(try server.post(events: Scenario.events).status == 200)
        let metrics = MetricsText.dataOnly(try server.get("/metrics").text, keepHTTP: false)
        let booking = try Self.eventCount(server, "/api/bookings/BK-1042")
        #expect(try server.get("/api/activities/old-1").status == 200)

        let result = try Self.retention(server).runOnce()
        #expect(result.events == 3)
        #expect(result.activities == 1)
        #expect(try server.get("/api/activities/old-1").status == 404)
        #expect(try Self.eventCount(server, "/api/bookings/BK-1042") == booking)
        #expect(MetricsText.dataOnly(try server.get("/metrics").text, keepHTTP: false) == metrics)
        try server.restart()   // counters come back from the table, not from the (pruned) log
        #expect(MetricsText.dataOnly(try server.get("/metrics").text, keepHTTP: false) == metrics)
        #expect(try Self.retention(server).runOnce() == (events: 0, activities: 0))
    }

    @Test func serveWithRetentionPrunesOnItsOwn() throws {
        let server = try TestServer { c in
            c.retention = 30 * Self.day
            c.retentionInterval = 0.05
        }
        defer { server.stop() }
        #expect(try server.post(events: Self.oldActivity("old-2")).status == 200)
        #expect(try server.post(events: [IngestTests.started("recent")]).status == 200)
        let deadline = Date().addingTimeInterval(10)
        while try server.get("/api/activities/old-2").status != 404, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(try server.get("/api/activities/old-2").status == 404)
        #expect(try server.get("/api/activities/recent").status == 200)
        #expect(try server.metric("liveactivity_ingest_events_total{type=\"activity.started\"}") == 2)
    }

    /// `count` activities from 40 days ago (3 events each), posted 300 activities per request.
    static func postOld(_ server: TestServer, _ prefix: String, activities count: Int) throws {
        for start in stride(from: 0, to: count, by: 300) {
            let events = (start..<min(start + 300, count)).flatMap { Self.oldActivity("\(prefix)-\($0)", note: 300) }
            #expect(try server.post(events: events).status == 200)
        }
    }

    @Test func pruningDoesNotHoldIngestBack() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [IngestTests.started("live")]).status == 200)
        try Self.postOld(server, "old", activities: 1000)
        let done = LockedCounter()
        let pruned = LockedCounter()
        let retention = Self.retention(server)
        Thread {
            do { pruned.add(try retention.runOnce().events) } catch { Issue.record("prune failed: \(error)") }
            done.add(1)
        }.start()
        var latencies: [Double] = []
        while done.value == 0 {
            let n = latencies.count + 1
            let event = JSONValue(["type": "activity.updated", "activity_id": "live", "occurred_at": TestServer.base - 50,
                                   "timestamp": TestServer.base - 50 + Double(n) / 1000,
                                   "content_state": ["startedAt": n]] as [String: Any])
            let started = DispatchTime.now().uptimeNanoseconds
            #expect(try server.post(events: [event]).status == 200)
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        }
        latencies.sort()
        let worst = latencies.last ?? 0
        print("retention: \(latencies.count) ingests while pruning \(pruned.value) events: median "
              + "\(Int(latencies[latencies.count / 2] * 1000)) ms, worst \(Int(worst * 1000)) ms")
        #expect(pruned.value == 3000)
        #expect(latencies.count >= 3, "the prune ran in several transactions, ingest got in between")
        #expect(worst < 1.0)
    }

    @Test func theFileStopsGrowing() throws {
        let server = try TestServer()
        defer { server.stop() }
        let retention = Self.retention(server)
        var sizes: [Int64] = []
        for cycle in 0..<3 {
            try Self.postOld(server, "c\(cycle)", activities: 300)
            let grown = server.server.store.sizeBytes
            #expect(try retention.runOnce() == (events: 900, activities: 300))
            sizes.append(server.server.store.sizeBytes)
            #expect(sizes[cycle] < grown / 2, "pages went back to the file system: \(grown) → \(sizes[cycle])")
        }
        print("retention: database + WAL after each of 3 ingest/prune cycles of 900 events: \(sizes) bytes")
        #expect(sizes.max()! <= sizes[0] + sizes[0] / 10, "\(sizes)")
    }
}
