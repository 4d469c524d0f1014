import Foundation
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// The reporter's `activity.observed` and `device.push_to_start_token` sent to the running
/// monitor: accepted, echoed, and judged by its engine (delivery evidence, superseded tokens).
@Suite(.serialized)
struct EvidenceRoundTripTests {
    @Test func observationsAndPushToStartTokensRoundTrip() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url),
                                        sleep: SleepRecorder().immediate)
        let type = "LiveActivityAttributes"
        // The app's start, its token, an update, the backend's push, and what the phone shows.
        let activity = Samples.everyKind().filter { ["ev-started", "ev-token", "ev-updated", "ev-push", "ev-observed"].contains($0.id) }
        #expect(activity.count == 5)
        let newer = PushToken(hex: String(repeating: "9a", count: 32))
        let device: [LiveActivityEvent] = [
            .pushToStartToken(deviceID: "device-7", attributesType: type, pushToken: Samples.pushToStartToken,
                              occurredAt: Samples.at(6), id: "ev-p2s-1"),
            .pushToStartToken(deviceID: "device-7", attributesType: type, pushToken: newer,
                              occurredAt: Samples.at(7), id: "ev-p2s-2"),
            // The backend still starts with the old token.
            .pushSent(activityID: nil,
                      PushSent(event: .start, status: 200, latencyMs: 12, pushToken: Samples.pushToStartToken,
                               contentState: ["driverName": "Ana", "rating": "4.9", "progress": 0.0, "duration": 7],
                               pushToStartToken: Samples.pushToStartToken),
                      bookingID: "BK-3000", attributesType: type, occurredAt: Samples.at(8), id: "ev-start-old"),
        ]
        await reporter.report(activity + device)
        #expect(await reporter.flush())
        let stats = await reporter.statistics
        #expect(stats.accepted == activity.count + device.count && stats.rejected == 0)

        // The observation is echoed, and confirms the push it shows.
        let events = try await server.events(booking: "BK-1042")
        let observed = try #require(events["ev-observed"])
        #expect(observed["type"] == "activity.observed")
        #expect(observed["content_state"] == ["driverName": "Ana", "rating": "4.9", "progress": 0.8, "duration": 2])
        #expect(events["ev-push"]?["effect"]?.objectValue?["delivery"] == "confirmed")
        #expect(events["ev-push"]?["effect"]?.objectValue?["delivery_seconds"] == 0.875)
        #expect(try await server.metric(#"liveactivity_push_deliveries_total{outcome="confirmed"}"#) == 1)
        let a1 = try await server.json("/api/activities/A1B2")
        #expect(a1.objectValue?["delivery"]?.objectValue?["last_confirmed_at"] == .string(RFC3339.format(Samples.at(4).timeIntervalSince1970)))

        // The device's tokens: one current, one rotation; the start push to the old one did nothing.
        #expect(try await server.metric(#"liveactivity_push_to_start_tokens{attributes_type="LiveActivityAttributes"}"#) == 1)
        #expect(try await server.metric(#"liveactivity_push_to_start_token_rotations_total{attributes_type="LiveActivityAttributes"}"#) == 1)
        #expect(try await server.metric(#"liveactivity_pushes_without_effect_total{why="superseded_token"}"#) == 1)
        let start = try #require(try await server.events(booking: "BK-3000")["ev-start-old"])
        #expect(start["effect"]?.objectValue?["why"] == "superseded_token")
        #expect(start["push_to_start_token_fingerprint"] == .string(TokenFingerprint.of(Samples.pushToStartToken.hex)))
        #expect(start["push_to_start_token"] == nil && start["push_token"] == nil)
    }
}
