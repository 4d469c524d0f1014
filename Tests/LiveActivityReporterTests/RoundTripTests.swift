import Foundation
import Testing
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// Every event type, every field set, sent by the reporter to the running monitor and read back
/// through its read API: the monitor must accept each one and echo each field unchanged.
@Suite(.serialized)
struct RoundTripTests {
    @Test func everyTypeIsAcceptedAndEchoed() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url),
                                        sleep: SleepRecorder().immediate)
        let events = Samples.everyKind()
        await reporter.report(events)
        #expect(await reporter.flush())
        let stats = await reporter.statistics
        #expect(stats.accepted == events.count)
        #expect(stats.rejected == 0 && stats.duplicates == 0 && stats.retries == 0)

        var stored = try await server.events(booking: "BK-1042")
        stored.merge(try await server.events(booking: "BK-2000")) { first, _ in first }
        // A channel's management results belong to no booking: its own answer lists them.
        stored.merge(try await server.events(channel: "ride-updates")) { first, _ in first }
        #expect(stored.count == events.count)
        for event in events {
            var expected = try EventEncodingTests.object(event)
            // The monitor keeps a fingerprint, never the token; later events inherit the booking.
            if let token = expected.removeValue(forKey: "push_token")?.stringValue {
                expected["token_fingerprint"] = .string(TokenFingerprint.of(token))
            }
            if let token = expected.removeValue(forKey: "push_to_start_token")?.stringValue {
                expected["push_to_start_token_fingerprint"] = .string(TokenFingerprint.of(token))
            }
            // A broadcast names no activity: it inherits no booking (its subscribers' reads find it);
            // nor does a channel management result.
            if expected["booking_id"] == nil, event.kind.namesActivity,
               expected["channel_id"] == nil || event.kind != .pushSent {
                expected["booking_id"] = "BK-1042"
            }
            var echoed = try #require(stored[event.id], "\(event.kind.rawValue) not stored")
            #expect(echoed.removeValue(forKey: "received_at") != nil)
            // What the monitor's engine made of it (the values: HistoryReplayTests).
            #expect(echoed.removeValue(forKey: "effect")?.objectValue?["result"] != nil)
            #expect(echoed.removeValue(forKey: "lock_screen") != nil)
            #expect(echoed == expected, "\(event.kind.rawValue)")
        }
    }

    @Test func theLockScreenStateFollowsTheEvents() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url),
                                        sleep: SleepRecorder().immediate)
        await reporter.report(Array(Samples.everyKind().prefix(4)))
        #expect(await reporter.flush())
        let activity = try #require(try await server.json("/api/activities/A1B2").objectValue)
        #expect(activity["state"] == "active")
        #expect(activity["booking_id"] == "BK-1042")
        // The push (timestamp +3 s) is newer than the app's update (+2 s): its content shows.
        #expect(activity["content_state"] == ["driverName": "Ana", "rating": "4.9", "progress": 0.8, "duration": 2])
        let token = try #require(activity["token"]?.objectValue)
        #expect(token["fingerprint"] == .string(TokenFingerprint.of(Samples.rotatedToken.hex)))
        #expect(token["rotations"] == 1)
        #expect(try await server.metric(#"liveactivity_push_token_rotations_total{attributes_type="LiveActivityAttributes"}"#) == 1)
    }
}
