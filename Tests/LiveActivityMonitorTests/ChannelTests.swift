import Foundation
import JSON
import Testing
@testable import LiveActivityMonitor

/// Channel management (DESIGN.md sections 3–6, "Channels"): `channel.created` and
/// `channel.deleted` results, counted by their answer; the live channels by storage policy; a
/// broadcast to a channel reported deleted before it is `unknown_channel` and reaches nobody;
/// an expiration on a no-storage channel is warned of; `/api/channels` tells it all, and all of
/// it survives a restart. Live, over HTTP, on a real SQLite file.
@Suite struct ChannelTests {
    typealias B = BroadcastTests
    static let quiet = "cXVpZXQtY2hhbm5lbA=="

    static func request(_ type: String, _ channel: String?, at: Double, status: Int, policy: Int? = nil,
                        reason: String? = nil, id: String? = nil) -> JSONValue {
        var o: [String: Any] = ["type": type, "occurred_at": at, "status": status, "latency_ms": 80]
        if let channel { o["channel_id"] = channel }
        if let policy { o["storage_policy"] = policy }
        if let reason { o["reason"] = reason }
        if let id { o["id"] = id }
        return JSONValue(o)
    }

    /// `value` with `key` set.
    static func setting(_ key: String, _ member: JSONValue, in value: JSONValue) -> JSONValue {
        guard case .object(var o) = value else { return value }
        o[key] = member
        return .object(o)
    }

    static func live(_ policy: String) -> String { "liveactivity_channels{storage_policy=\"\(policy)\"}" }

    @Test func channelRequestsAreCountedAndLiveChannelsKeptThroughARestart() throws {
        try withTestServer { server in
            let t = TestServer.base - 600
            let answer = try server.post(events: [
                Self.request("channel.created", B.channel, at: t, status: 201, policy: 1),
                Self.request("channel.created", Self.quiet, at: t + 1, status: 201, policy: 0),
                Self.request("channel.created", nil, at: t + 2, status: 400, reason: "CannotCreateChannelConfig"),
                Self.request("channel.created", "b3RoZXI=", at: t + 3, status: 201, policy: 1),
                Self.request("channel.deleted", "b3RoZXI=", at: t + 4, status: 204),
                Self.request("channel.deleted", "bm9uZQ==", at: t + 5, status: 404, reason: "BadChannelId"),
            ])
            #expect(answer.status == 200, "\(answer.text)")
            func check() throws {
                #expect(try server.metric(Self.live("1")) == 1)
                #expect(try server.metric(Self.live("0")) == 1)
                #expect(try server.metric("liveactivity_channel_requests_total{op=\"create\",reason=\"none\",status=\"201\"}") == 3)
                #expect(try server.metric("liveactivity_channel_requests_total{op=\"create\",reason=\"CannotCreateChannelConfig\",status=\"400\"}") == 1)
                #expect(try server.metric("liveactivity_channel_requests_total{op=\"delete\",reason=\"none\",status=\"204\"}") == 1)
                #expect(try server.metric("liveactivity_channel_requests_total{op=\"delete\",reason=\"BadChannelId\",status=\"404\"}") == 1)
                #expect(try server.metric("liveactivity_ingest_events_total{type=\"channel.created\"}") == 4)
                let list = try server.json("/api/channels")
                let states = Dictionary(uniqueKeysWithValues: (list["channels"]?.arrayValue ?? []).map {
                    ($0["channel_id"]?.stringValue ?? "", $0["state"]?.stringValue ?? "")
                })
                #expect(states == [B.channel: "live", Self.quiet: "live", "b3RoZXI=": "deleted"], "\(states)")
                #expect(list["counts"] == ["live": 2, "deleted": 1])
                #expect(list["limit"] == 10000)
            }
            try check()
            let metrics = try server.get("/metrics").text
            let (status, output) = try Promtool.checkMetrics(metrics)
            #expect(status == 0, "\(output)")
            try server.restart()
            try check()
        }
    }

    @Test func aBroadcastToADeletedChannelReachesNoSubscriber() throws {
        try withTestServer { server in
            let t = TestServer.base - 600
            #expect(try server.post(events: [Self.request("channel.created", B.channel, at: t, status: 201, policy: 1),
                                             B.subscriber("s1", at: t + 1), B.subscriber("s2", at: t + 1)]).status == 200)
            #expect(try server.post(events: [B.broadcast(at: t + 10, content: 10)]).status == 200)
            #expect(try server.post(events: [Self.request("channel.deleted", B.channel, at: t + 20, status: 204)]).status == 200)
            // A broadcast dated before the deletion but reported after it still found the channel.
            #expect(try server.post(events: [B.broadcast(at: t + 15, content: 15)]).status == 200)
            #expect(try server.post(events: [B.broadcast(at: t + 30, content: 30, id: "late")]).status == 200)
            #expect(try server.metric("liveactivity_pushes_without_effect_total{why=\"unknown_channel\"}") == 1)
            #expect(try server.metric(Self.live("1")) == 0)
            for id in ["s1", "s2"] {
                let activity = try server.json("/api/activities/\(id)")
                #expect(activity["content_state"]?["startedAt"] == 15)
                #expect(B.effects(activity).map(\.type) == ["activity.started", "push.sent", "push.sent"],
                        "the broadcast to the deleted channel is not filed under its subscribers")
            }
            let detail = try server.json("/api/channels/\(B.channel)")
            #expect(detail["state"] == "deleted")
            #expect(detail["subscribers"] == 2)
            #expect((detail["activities"]?.arrayValue ?? []).map { $0["activity_id"]?.stringValue ?? "" } == ["s1", "s2"],
                    "in phone order: started together, by id")
            let listed = try server.json("/api/channels")["channels"]?.arrayValue ?? []
            #expect(listed.first { $0["channel_id"]?.stringValue == B.channel }?["subscribers"] == 2)
            #expect(detail["last_broadcast"]?["result"] == "no_effect")
            #expect(detail["last_broadcast"]?["why"] == "unknown_channel")
            let events = (detail["events"]?.arrayValue ?? [])
            #expect(events.map { $0["type"]?.stringValue ?? "" }
                    == ["channel.created", "push.sent", "push.sent", "channel.deleted", "push.sent"])
            let late = try #require(events.last)
            #expect(late["id"] == "late")
            #expect(late["effect"]?["why"] == "unknown_channel")
            #expect(late["effect"]?["text"] == "no effect: the channel had been deleted")
            #expect((detail["activities"]?.arrayValue ?? []).compactMap { $0["activity_id"]?.stringValue } == ["s1", "s2"]
                    || (detail["activities"]?.arrayValue ?? []).compactMap { $0["activity_id"]?.stringValue } == ["s2", "s1"])
        }
    }

    @Test func anExpirationOnANoStorageChannelIsWarnedOf() throws {
        try withTestServer { server in
            let t = TestServer.base - 600
            let expiring = Self.setting("expiration", .number(JSONNumber(t + 3600)),
                                        in: B.broadcast(at: t + 10, content: 10, channel: Self.quiet))
            let none = Self.setting("expiration", 0, in: B.broadcast(at: t + 11, content: 11, channel: Self.quiet))
            let kept = Self.setting("expiration", .number(JSONNumber(t + 3600)), in: B.broadcast(at: t + 12, content: 12))
            let answer = try server.post(events: [
                Self.request("channel.created", Self.quiet, at: t, status: 201, policy: 0),
                Self.request("channel.created", B.channel, at: t, status: 201, policy: 1),
                expiring, none, kept,
            ])
            #expect(answer.status == 200, "\(answer.text)")
            #expect(try server.metric("liveactivity_push_warnings_total{warning=\"expiration_on_no_storage_channel\"}") == 1)
            let events = try server.json("/api/channels/\(Self.quiet)")["events"]?.arrayValue ?? []
            #expect(events.last?["effect"]?["warnings"] == [])
            #expect(events.dropLast().last?["effect"]?["warnings"] == ["expiration_on_no_storage_channel"])
        }
    }

    /// The fields a 422 names for `event`.
    static func refusedFields(_ event: JSONValue, _ server: TestServer) throws -> [String] {
        let answer = try server.post(events: [event])
        #expect(answer.status == 422, "\(answer.text)")
        return (try JSONParser.parse(answer.body)["errors"]?.arrayValue ?? []).compactMap { $0["field"]?.stringValue }
    }

    @Test func channelRequestsAreCheckedAsTheSchemaSays() throws {
        try withTestServer { server in
            let t = TestServer.base - 60
            let cases: [(event: JSONValue, fields: [String])] = [
                (Self.request("channel.created", nil, at: t, status: 201), ["channel_id"]),
                (Self.request("channel.deleted", nil, at: t, status: 204), ["channel_id"]),
                (Self.request("channel.created", B.channel, at: t, status: 201, policy: 2), ["storage_policy"]),
                (JSONValue(["type": "channel.deleted", "channel_id": B.channel, "occurred_at": t]), ["status"]),
                (Self.setting("activity_id", "a1", in: Self.request("channel.created", B.channel, at: t, status: 201)),
                 ["activity_id"]),
            ]
            for (event, fields) in cases {
                let refused = try Self.refusedFields(event, server)
                #expect(refused == fields, "\(event)")
            }
            #expect(try server.get("/api/channels/bm8tc3VjaA==").status == 404)
        }
    }
}
