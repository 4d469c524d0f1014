import Foundation
import JSON
import LiveActivityWire
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// Broadcasts (DESIGN.md sections 2–4, "Channels"): a `push.sent` with `channel_id` is one
/// event, stored and applied in one commit to every live activity subscribed to the channel
/// (`activity.started` `channel_id`), by the newest-timestamp rule; each subscriber's timeline
/// shows it with its effect for that activity, the same with `?at=` (the replay).
@Suite struct BroadcastTests {
    static let type = "TimerWidgetAttributes"
    static let channel = "Y2hhbm5lbC1h"
    static let subscriptions = "liveactivity_channel_subscriptions{attributes_type=\"\(type)\"}"

    static func subscriber(_ id: String, at: Double, channel: String = BroadcastTests.channel) -> JSONValue {
        guard case .object(var o) = IngestTests.started(id, at: at) else { return .null }
        o["channel_id"] = .string(channel)
        o["content_state"] = ["startedAt": .number(JSONNumber(at))]
        return .object(o)
    }

    static func broadcast(_ event: String = "update", at: Double, timestamp: Double? = nil, content: Double,
                          channel: String = BroadcastTests.channel, status: Int = 200, priority: Int = 5,
                          id: String? = nil, reason: String? = nil) -> JSONValue {
        var o: [String: Any] = ["type": "push.sent", "channel_id": channel, "event": event, "status": status,
                                "latency_ms": 30, "priority": priority, "occurred_at": at,
                                "timestamp": timestamp ?? at, "content_state": ["startedAt": content]]
        if let id { o["id"] = id }
        if let reason { o["reason"] = reason }
        return JSONValue(o)
    }

    /// The events of an activity's answer, with their effect's `why` (nil: applied).
    static func effects(_ answer: JSONValue) -> [(type: String, why: String?, text: String)] {
        (answer["events"]?.arrayValue ?? []).map { e in
            (e["type"]?.stringValue ?? "", e["effect"]?["why"]?.stringValue, e["effect"]?["text"]?.stringValue ?? "")
        }
    }

    @Test func aBroadcastToAThousandSubscribersAppliesToEachInOneCommit() throws {
        try withTestServer { server in
            let t0 = TestServer.base - 600
            let ids = (0..<1000).map { "b\($0)" }
            #expect(try server.post(events: ids.map { Self.subscriber($0, at: t0) }).status == 200)
            #expect(try server.metric(Self.subscriptions) == 1000)
            let commits = "liveactivity_store_commit_seconds_count"
            let before = try #require(try server.metric(commits))
            let response = try server.post(events: [Self.broadcast(at: TestServer.base - 60, content: 42)])
            #expect(response.status == 200, "\(response.text)")
            #expect(try server.metric(commits) == before + 1, "one broadcast, one commit")
            #expect(try server.metric("liveactivity_ingest_events_total{type=\"push.sent\"}") == 1)
            #expect(try server.metric("liveactivity_broadcast_pushes_total{event=\"update\",priority=\"5\",reason=\"none\",status=\"200\"}") == 1)
            #expect(try server.metric("liveactivity_broadcast_latency_seconds_count{event=\"update\",priority=\"5\"}") == 1)
            #expect(try server.metric("liveactivity_push_requests_total{event=\"update\",priority=\"5\",reason=\"none\",status=\"200\"}") == nil)
            let list = try server.json("/api/activities?limit=1000")
            let contents = (list["activities"]?.arrayValue ?? []).map { $0["content_state"]?["startedAt"] }
            #expect(contents.count == 1000)
            #expect(contents.allSatisfy { $0 == 42 })
            // Each subscriber's timeline shows the broadcast, applied to it.
            for id in ["b0", "b500", "b999"] {
                let effects = Self.effects(try server.json("/api/activities/\(id)"))
                #expect(effects.map(\.type) == ["activity.started", "push.sent"], "\(id)")
                #expect(effects.last?.why == nil && effects.last?.text == "applied", "\(id): \(effects)")
            }
        }
    }

    @Test func aBroadcastOlderThanASubscribersOwnContentLeavesIt() throws {
        try withTestServer { server in
            let t0 = TestServer.base - 600
            var own = IngestTests.started("own", at: t0)
            own = Self.subscriber("own", at: t0)
            let update = JSONValue(["type": "activity.updated", "activity_id": "own", "occurred_at": t0 + 300,
                                    "timestamp": t0 + 300, "content_state": ["startedAt": 7]])
            #expect(try server.post(events: [own, Self.subscriber("other", at: t0), update]).status == 200)
            // Sent after the update, but with an older timestamp.
            #expect(try server.post(events: [Self.broadcast(at: t0 + 400, timestamp: t0 + 200, content: 42)]).status == 200)
            #expect(try server.json("/api/activities/own")["content_state"]?["startedAt"] == 7)
            #expect(try server.json("/api/activities/other")["content_state"]?["startedAt"] == 42)
            let effects = Self.effects(try server.json("/api/activities/own"))
            #expect(effects.last?.type == "push.sent" && effects.last?.why == "out_of_order", "\(effects)")
            #expect(Self.effects(try server.json("/api/activities/other")).last?.why == nil)
            // The replay at an instant agrees.
            let at = try server.json("/api/activities/own?at=\(RFC3339.format(t0 + 500))")
            #expect(at["content_state"]?["startedAt"] == 7)
            #expect(Self.effects(try server.json("/api/bookings/BK-own")).last?.why == "out_of_order")
        }
    }

    @Test func aSubscriberThatEndedBeforeTheBroadcastIsUntouched() throws {
        try withTestServer { server in
            let t0 = TestServer.base - 600
            let ended = JSONValue(["type": "activity.ended", "activity_id": "gone", "occurred_at": t0 + 100])
            #expect(try server.post(events: [Self.subscriber("gone", at: t0), Self.subscriber("live", at: t0), ended]).status == 200)
            #expect(try server.metric(Self.subscriptions) == 1)
            #expect(try server.post(events: [Self.broadcast("end", at: t0 + 200, content: 99)]).status == 200)
            let gone = try server.json("/api/activities/gone")
            #expect(gone["content_state"]?["startedAt"] == .number(JSONNumber(t0)))
            #expect(gone["ended_by"] == "app")
            #expect(Self.effects(gone).last?.why == "ended")
            let live = try server.json("/api/activities/live")
            #expect(live["state"] == "ended")
            #expect(live["ended_by"] == "push")
            #expect(live["content_state"]?["startedAt"] == 99)
            #expect(try server.metric("liveactivity_activities_ended_total{attributes_type=\"\(Self.type)\",by=\"push\"}") == 1)
        }
    }

    @Test func subscriptionsSurviveARestart() throws {
        try withTestServer { server in
            let t0 = TestServer.base - 600
            #expect(try server.post(events: [Self.subscriber("r1", at: t0), Self.subscriber("r2", at: t0),
                                             Self.subscriber("r3", at: t0, channel: "another")]).status == 200)
            #expect(try server.metric(Self.subscriptions) == 3)
            try server.restart()
            #expect(try server.metric(Self.subscriptions) == 3)
            #expect(try server.json("/api/activities/r1")["channel_id"] == .string(Self.channel))
            #expect(try server.post(events: [Self.broadcast(at: t0 + 60, content: 5)]).status == 200)
            #expect(try server.json("/api/activities/r1")["content_state"]?["startedAt"] == 5)
            #expect(try server.json("/api/activities/r2")["content_state"]?["startedAt"] == 5)
            #expect(try server.json("/api/activities/r3")["content_state"]?["startedAt"] == .number(JSONNumber(t0)))
        }
    }

    /// After a crash, start-up replays the broadcast's commit as the writer made it: the same
    /// subscribers' records and counters, and its filing under them stored once.
    @Test func aCrashAfterABroadcastReplaysItToTheSameSubscribers() throws {
        let server = try TestServer { $0.catchUpInterval = 3600 }   // rows behind until told
        defer { server.stop() }
        let t0 = TestServer.base - 600
        let ids = ["c1", "c2", "c3"]
        #expect(try server.post(events: ids.map { Self.subscriber($0, at: t0) }).status == 200)
        server.server.store.catchUp()
        #expect(try server.post(events: [Self.broadcast(at: t0 + 60, content: 8, id: "bc-1")]).status == 200)
        #expect(try server.post(events: [Self.broadcast("end", at: t0 + 120, content: 9, id: "bc-2")]).status == 200)

        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let image = directory + "/monitor.sqlite"
        let expected = try ReplayTests.crashImage(of: server, to: image, ids: ids)
        #expect(expected.records.allSatisfy { $0.endedBy == .push && $0.contentState?.text == "{\"startedAt\":9}" })
        let (clock, _) = Clock.manual(server.time.value)
        let copy = try EventStore(path: image, clock: clock) { _ in }
        let replayed = try ReplayTests.state(of: copy, ids: ids)
        copy.close()
        #expect(replayed.records == expected.records)
        #expect(replayed.counters == expected.counters)
        let filed = try Database(path: image, mode: .readOnly).scalar("SELECT count(*) FROM broadcast_receivers")
        #expect(filed == .integer(6), "two broadcasts, three subscribers each")
    }

    @Test func aFailedBroadcastAppliesToNoneAndIsCountedByItsAnswer() throws {
        try withTestServer { server in try Self.failedBroadcast(server) }
    }

    static func failedBroadcast(_ server: TestServer) throws {
        do {
            let t0 = TestServer.base - 600
            #expect(try server.post(events: [Self.subscriber("f1", at: t0)]).status == 200)
            let failed = Self.broadcast(at: t0 + 60, content: 5, status: 400, reason: "BadChannelId")
            #expect(try server.post(events: [failed]).status == 200)
            #expect(try server.json("/api/activities/f1")["content_state"]?["startedAt"] == .number(JSONNumber(t0)))
            #expect(try server.metric("liveactivity_broadcast_pushes_total{event=\"update\",priority=\"5\",reason=\"BadChannelId\",status=\"400\"}") == 1)
            #expect(try server.metric("liveactivity_push_warnings_total{warning=\"unknown_reason\"}") == 0)
        }
    }

    @Test func priorityOneIsForBroadcastsAndWarnedOnATokenPush() throws {
        try withTestServer { server in
            let t0 = TestServer.base - 600
            #expect(try server.post(events: [IngestTests.started("p1", at: t0)]).status == 200)
            let push = JSONValue(["type": "push.sent", "activity_id": "p1", "event": "update", "status": 200, "latency_ms": 5,
                                  "priority": 1, "push_token": IngestTests.token, "occurred_at": t0 + 10,
                                  "content_state": ["startedAt": 3]])
            #expect(try server.post(events: [push]).status == 200)
            #expect(try server.metric("liveactivity_push_warnings_total{warning=\"priority1_on_token\"}") == 1)
            #expect(try server.post(events: [Self.broadcast(at: t0 + 20, content: 4, priority: 1)]).status == 200)
            #expect(try server.metric("liveactivity_push_warnings_total{warning=\"priority1_on_token\"}") == 1)
            // Priorities other than 1, 5 and 10 are not understood.
            let bad = try server.post(events: [Self.broadcast(at: t0 + 30, content: 4, priority: 3)])
            #expect(bad.status == 422, "\(bad.text)")
        }
    }

    @Test func aBroadcastNamingAnActivityOrATokenIsNotUnderstood() throws {
        try withTestServer { server in
            guard case .object(var o) = Self.broadcast(at: TestServer.base, content: 1) else { return }
            o["activity_id"] = "a1"
            let response = try server.post(events: [.object(o)])
            #expect(response.status == 422)
            #expect(response.text.contains("not allowed on a broadcast"), "\(response.text)")
        }
    }
}
