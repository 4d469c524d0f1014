import Foundation
import Testing
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// A backend's broadcast channel from creation to deletion, reported through the APNs helpers to
/// the running monitor (DESIGN.md section 4, "Channels"), and a scheduled start: what the read
/// API and the metrics then say.
@Suite(.serialized)
struct ChannelRoundTripTests {
    /// A base64 channel id as APNs hands them out, with the "/", "+" and "=" a path must keep.
    static let channel = "c3BvcnRz/Z2FtZS00Mg+="
    static let createBody = Data(#"{"message-storage-policy": 1, "push-type": "LiveActivity"}"#.utf8)
    static let type = "LiveActivityAttributes"

    static func payload(_ event: String, timestamp: Double, progress: Double) -> Data {
        Data("""
            {"aps": {"timestamp": \(Int(LiveServer.base + timestamp)), "event": "\(event)",
                     "content-state": {"driverName": "Ana", "rating": "4.9", "progress": \(progress), "duration": 3}}}
            """.utf8)
    }

    static func content(progress: Double) -> JSONContent {
        ["driverName": "Ana", "rating": "4.9", "progress": .number(progress), "duration": 3]
    }

    static func subscriber(_ id: String, at seconds: Double) -> LiveActivityEvent {
        .started(activityID: id, bookingID: "BK-" + id, attributesType: type,
                 ActivityStarted(contentState: content(progress: 0), channelID: channel), occurredAt: Samples.at(seconds))
    }

    @Test func aChannelFromCreationToDeletion() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url, app: "com.example.ride"),
                                        sleep: SleepRecorder().immediate)
        // The backend creates the channel (APNs: 201, apns-channel-id), and a first create that APNs refused.
        await reporter.report(try .channelCreated(requestBody: Self.createBody, status: 400, channelID: nil,
                                                  reason: "CannotCreateChannelConfig", latencyMs: 31, occurredAt: Samples.at(-20)))
        await reporter.report(try .channelCreated(requestBody: Self.createBody, status: 201, channelID: Self.channel,
                                                  latencyMs: 85.5, occurredAt: Samples.at(-10), id: "created"))
        // Two phones start activities subscribed to it (`pushType: .channel(id)`).
        await reporter.report(Self.subscriber("S1", at: 0))
        await reporter.report(Self.subscriber("S2", at: 1))
        // One broadcast reaches both.
        await reporter.report(try .pushSent(apnsPayload: Self.payload("update", timestamp: 10, progress: 0.5),
                                            channelID: Self.channel, priority: .low, status: 200,
                                            apnsRequestID: "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b", latencyMs: 20,
                                            occurredAt: Samples.at(10), id: "broadcast"))
        #expect(await reporter.flush())
        for id in ["S1", "S2"] {
            let activity = try #require(try await server.json("/api/activities/\(id)").objectValue)
            #expect(activity["state"] == "active")
            #expect(activity["channel_id"] == .string(Self.channel))
            #expect(activity["content_state"] == Self.content(progress: 0.5), "\(id)")
        }
        var detail = try #require(try await server.json("/api/channels/" + LiveServer.pathSegment(Self.channel)).objectValue)
        #expect(detail["state"] == "live")
        #expect(detail["storage_policy"] == 1)
        #expect(detail["subscribers"] == 2)
        #expect(detail["last_broadcast"]?.objectValue?["result"] == "applied")

        // The backend deletes it (APNs: 204); a broadcast after that finds no channel.
        await reporter.report(LiveActivityEvent.channelDeleted(channelID: Self.channel, status: 204, latencyMs: 40,
                                                               occurredAt: Samples.at(20), id: "deleted"))
        await reporter.report(try .pushSent(apnsPayload: Self.payload("update", timestamp: 30, progress: 0.9),
                                            channelID: Self.channel, priority: .broadcastLowest, status: 200,
                                            apnsRequestID: "6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b9c", latencyMs: 18,
                                            occurredAt: Samples.at(30), id: "late"))
        #expect(await reporter.flush())
        let stats = await reporter.statistics
        #expect(stats.accepted == 7 && stats.rejected == 0)

        detail = try #require(try await server.json("/api/channels/" + LiveServer.pathSegment(Self.channel)).objectValue)
        #expect(detail["channel_id"] == .string(Self.channel))
        #expect(detail["state"] == "deleted")
        #expect(detail["last_broadcast"]?.objectValue?["result"] == "no_effect")
        #expect(detail["last_broadcast"]?.objectValue?["why"] == "unknown_channel")
        let events = detail["events"]?.arrayValue ?? []
        #expect(events.compactMap { $0.objectValue?["id"]?.stringValue } == ["created", "broadcast", "deleted", "late"])
        let late = try #require(events.last?.objectValue)
        #expect(late["effect"]?.objectValue?["why"] == "unknown_channel")
        #expect(late["apns_request_id"] == "6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b9c")
        #expect(late["priority"] == 1)
        // The subscribers keep what the last broadcast that reached them brought.
        for id in ["S1", "S2"] {
            let activity = try #require(try await server.json("/api/activities/\(id)").objectValue)
            #expect(activity["content_state"] == Self.content(progress: 0.5), "\(id)")
        }
        let list = try #require(try await server.json("/api/channels").objectValue)
        #expect(list["counts"] == ["live": 0, "deleted": 1])

        #expect(try await server.metric(#"liveactivity_channel_requests_total{op="create",reason="none",status="201"}"#) == 1)
        #expect(try await server.metric(#"liveactivity_channel_requests_total{op="create",reason="CannotCreateChannelConfig",status="400"}"#) == 1)
        #expect(try await server.metric(#"liveactivity_channel_requests_total{op="delete",reason="none",status="204"}"#) == 1)
        #expect(try await server.metric(#"liveactivity_pushes_without_effect_total{why="unknown_channel"}"#) == 1)
        #expect(try await server.metric(#"liveactivity_channels{storage_policy="1"}"#) == 0)
        #expect(try await server.metric(#"liveactivity_ingest_events_total{type="channel.created"}"#) == 2)
        #expect(try await server.metric(#"liveactivity_ingest_events_total{type="channel.deleted"}"#) == 1)
    }

    /// A channel that stores no message takes broadcasts with `apns-expiration` 0 only: another
    /// expiration is recorded, with a warning.
    @Test func anExpirationOnANoStorageChannelIsWarnedOf() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url),
                                        sleep: SleepRecorder().immediate)
        await reporter.report(try .channelCreated(requestBody: Data(#"{"message-storage-policy": 0, "push-type": "LiveActivity"}"#.utf8),
                                                  status: 201, channelID: "cXVpZXQ=", latencyMs: 50, occurredAt: Samples.at(0)))
        for (i, expiration) in [0, Int(LiveServer.base) + 3600].enumerated() {
            await reporter.report(try .pushSent(apnsPayload: Self.payload("update", timestamp: Double(10 + i), progress: 0.1),
                                                channelID: "cXVpZXQ=", expiration: expiration, status: 200, latencyMs: 20,
                                                occurredAt: Samples.at(Double(10 + i)), id: "expiring-\(i)"))
        }
        #expect(await reporter.flush())
        #expect(try await server.metric(#"liveactivity_channels{storage_policy="0"}"#) == 1)
        #expect(try await server.metric(#"liveactivity_push_warnings_total{warning="expiration_on_no_storage_channel"}"#) == 1)
        let events = try await server.events(channel: "cXVpZXQ=")
        #expect(events["expiring-0"]?["effect"]?.objectValue?["warnings"] == [])
        #expect(events["expiring-1"]?["effect"]?.objectValue?["warnings"] == ["expiration_on_no_storage_channel"])
    }

    /// A channel management result that names an activity is rejected on `report` (and logged),
    /// and never reaches the monitor, which would refuse it with the rest of its batch.
    @Test func aChannelResultNamingAnActivityIsRejectedBeforeSending() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let lines = LogLines()
        var configuration = ReporterConfiguration(serverURL: server.url)
        configuration.log = lines.sink
        let reporter = ActivityReporter(configuration: configuration, sleep: SleepRecorder().immediate)
        var wrong = LiveActivityEvent.channelDeleted(channelID: Self.channel, status: 204, latencyMs: 1,
                                                     occurredAt: Samples.at(0), id: "wrong")
        wrong.activityID = "S1"
        await reporter.report(wrong)
        await reporter.report(.channelDeleted(channelID: Self.channel, status: 204, latencyMs: 1, occurredAt: Samples.at(1),
                                              id: "right"))
        #expect(await reporter.flush())
        let stats = await reporter.statistics
        #expect(stats.rejected == 1 && stats.accepted == 1)
        let events = try await server.events(channel: Self.channel)
        #expect(events.keys.sorted() == ["right"])
        #expect(lines.value.contains { $0.contains("rejected channel.deleted event wrong") && $0.contains("names a channel, not an activity") },
                "\(lines.value)")
    }

    /// INTEGRATION.md's broadcast section shows the events to report after each call to APNs:
    /// the monitor's own decoder takes each, and each has the fields the Swift helper writes.
    @Test func theGuidesBroadcastEventsAreValid() throws {
        let guide = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/LiveActivityReporter/INTEGRATION.md")
        let text = try String(contentsOf: guide, encoding: .utf8)
        let start = try #require(text.range(of: "\n## 5. Broadcast channels\n"))
        let end = try #require(text.range(of: "\n## 6. ", range: start.upperBound..<text.endIndex))
        let blocks = text[start.upperBound..<end.lowerBound].components(separatedBy: "```json\n").dropFirst()
            .compactMap { $0.components(separatedBy: "```").first }
        #expect(blocks.count == 3)
        var types: [String] = []
        for block in blocks {
            let events = try IngestDecoder().decode(Array(block.utf8), format: .json)
            types += events.map(\.type.rawValue)
        }
        #expect(types == ["channel.created", "push.sent", "channel.deleted"])

        // The same calls through the helpers: the guide's keys, no more, no fewer.
        let keys = try blocks.map { try #require(try JSONDecoder().decode(JSONContent.self, from: Data($0.utf8)).objectValue).keys }
        let helpers: [LiveActivityEvent] = [
            try .channelCreated(requestBody: Self.createBody, status: 201, channelID: "dHN0MTIzNDU2Nzg5MA==", latencyMs: 183,
                                app: "com.example.ride"),
            try .pushSent(apnsPayload: Self.payload("update", timestamp: 0, progress: 0.5), channelID: "dHN0MTIzNDU2Nzg5MA==",
                          priority: .low, expiration: 0, status: 200, apnsRequestID: "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b",
                          latencyMs: 41, app: "com.example.ride"),
            .channelDeleted(channelID: "dHN0MTIzNDU2Nzg5MA==", status: 204, latencyMs: 95, app: "com.example.ride"),
        ]
        for (guideKeys, event) in zip(keys, helpers) {
            #expect(Set(guideKeys) == Set(try EventEncodingTests.object(event).keys), "\(event.kind.rawValue)")
        }
    }

    /// iOS 26's scheduled start: `pending` until `start_date`, then `active`, by time alone.
    @Test func aScheduledStartIsPendingUntilItsDate() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url),
                                        sleep: SleepRecorder().immediate)
        // The server's clock is at base + 60: the activity starts 10 minutes later.
        await reporter.report(.started(activityID: "P1", bookingID: "BK-P1", attributesType: Self.type,
                                       ActivityStarted(contentState: Self.content(progress: 0), startDate: Samples.at(660)),
                                       occurredAt: Samples.at(0), id: "scheduled"))
        #expect(await reporter.flush())
        var activity = try #require(try await server.json("/api/activities/P1").objectValue)
        #expect(activity["state"] == "pending")
        #expect(activity["start_date"] == "2026-11-18T11:17:40Z")
        let pending = #"liveactivity_activities{attributes_type="LiveActivityAttributes",state="pending"}"#
        #expect(try await server.metric(pending) == 1)
        let stored = try #require(try await server.events(booking: "BK-P1")["scheduled"])
        #expect(stored["start_date"] == "2026-11-18T11:17:40Z")

        server.time.set(LiveServer.base + 661)
        activity = try #require(try await server.json("/api/activities/P1").objectValue)
        #expect(activity["state"] == "active")
        #expect(try await server.metric(pending) == 0)
    }
}

private extension JSONContent {
    var arrayValue: [JSONContent]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}
