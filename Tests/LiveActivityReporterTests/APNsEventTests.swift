import Foundation
import Testing
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// The backend helper: one APNs request of the ride app (seed 001) becomes one `push.sent`.
@Suite(.serialized)
struct APNsEventTests {
    static let token = PushToken(hex: "c0ffee" + String(repeating: "00112233445566778899aabbccddeeff", count: 2))

    /// The seed's update payload, as its `curl` sends it.
    static let update = Data("""
        {"aps": {
           "timestamp": 1795000100,
           "event": "update",
           "content-state": {
              "driverName": "Ana",
              "rating": "4.9",
              "progress": 0.4,
              "duration": 7
           },
           "stale-date": 1795000400,
           "relevance-score": 25,
           "alert": {"title": "Ana is on her way", "body": "7 minutes", "sound": "default"}
        }}
        """.utf8)

    /// The seed's end payload with its dismissal-date 30 s later.
    static let end = Data("""
        {"aps": {"timestamp": 1795000200, "dismissal-date": 1795000230, "event": "end",
                 "content-state": {"driverName": "Ana", "rating": "4.9", "progress": 1, "duration": 0}}}
        """.utf8)

    @Test func anUpdateRequestBecomesPushSent() throws {
        let event = try LiveActivityEvent.pushSent(
            apnsPayload: Self.update, pushToken: Self.token, priority: .high, status: 200,
            apnsID: "0d4c3f2e-6f5a-4b1c-9d8e-7f6a5b4c3d2e", latencyMs: 38.2, activityID: "A1B2",
            occurredAt: Samples.at(100), id: "push-1")
        guard case .pushSent(let push) = event.payload else { Issue.record("not push.sent"); return }
        #expect(push == PushSent(event: .update, status: 200, latencyMs: 38.2, pushToken: Self.token, priority: .high,
                                 apnsID: "0d4c3f2e-6f5a-4b1c-9d8e-7f6a5b4c3d2e", payloadBytes: Self.update.count,
                                 timestamp: Samples.at(100), contentState: Samples.ride, staleDate: Samples.at(400),
                                 relevanceScore: 25, alert: ActivityAlert(title: "Ana is on her way", body: "7 minutes")))
        #expect(event.activityID == "A1B2" && event.id == "push-1" && event.attributesType == nil)
    }

    @Test func aPushToStartCarriesItsAttributes() throws {
        let payload = Data("""
            {"aps": {"timestamp": 1795000000, "event": "start", "attributes-type": "LiveActivityAttributes",
                     "attributes": {"name": "Live Activity"}, "content-state": {"driverName": "Ana", "rating": "4.9",
                     "progress": 0, "duration": 12}, "alert": {"title": {"loc-key": "RIDE_START"}}}}
            """.utf8)
        let event = try LiveActivityEvent.pushSent(apnsPayload: payload, pushToken: Self.token, status: 200,
                                                   latencyMs: 20, activityID: nil, bookingID: "BK-7")
        guard case .pushSent(let push) = event.payload else { Issue.record("not push.sent"); return }
        #expect(event.attributesType == "LiveActivityAttributes" && event.bookingID == "BK-7")
        #expect(push.event == .start && push.attributes == ["name": "Live Activity"])
        // A localized alert has no text to keep.
        #expect(push.alert == nil)
    }

    @Test func aPayloadThatIsNotLiveActivityJSONIsRefused() {
        func make(_ text: String) throws(APNsPayloadError) -> LiveActivityEvent {
            try LiveActivityEvent.pushSent(apnsPayload: Data(text.utf8), pushToken: Self.token, status: 200,
                                           latencyMs: 1, activityID: "A")
        }
        #expect(throws: APNsPayloadError.missingAPS) { try make(#"{"alert": "hi"}"#) }
        #expect(throws: APNsPayloadError.badEvent("refresh")) { try make(#"{"aps": {"event": "refresh"}}"#) }
        #expect(throws: APNsPayloadError.badEvent(nil)) { try make(#"{"aps": {}}"#) }
        do {
            _ = try make("not json")
            Issue.record("accepted a body that is not JSON")
        } catch {
            guard case .notJSON = error else { Issue.record("wrong error \(error)"); return }
        }
    }

    @Test func aPushToStartWithoutABookingIsRefusedUpFront() {
        // The monitor refuses it (422, booking_id required): the event would be lost.
        let start = Data(#"{"aps": {"event": "start", "attributes-type": "LiveActivityAttributes", "content-state": {}}}"#.utf8)
        do {
            _ = try LiveActivityEvent.pushSent(apnsPayload: start, pushToken: Self.token, status: 200, latencyMs: 1,
                                               activityID: nil)
            Issue.record("accepted a push-to-start without a booking id")
        } catch {
            #expect(error == .missingBookingID)
        }
        #expect(throws: APNsPayloadError.missingBookingID) {
            try LiveActivityEvent.pushSent(apnsPayload: start, pushToken: Self.token, status: 200, latencyMs: 1,
                                           activityID: nil, bookingID: "")
        }
        #expect(throws: Never.self) {
            try LiveActivityEvent.pushSent(apnsPayload: start, pushToken: Self.token, status: 200, latencyMs: 1,
                                           activityID: nil, bookingID: "BK-7")
        }
    }

    @Test func aFieldOfTheWrongTypeIsNamed() {
        let payload = Data(#"{"aps": {"event": "update", "timestamp": "1795000100", "content-state": {}}}"#.utf8)
        do {
            _ = try LiveActivityEvent.pushSent(apnsPayload: payload, pushToken: Self.token, status: 200, latencyMs: 1,
                                               activityID: "A")
            Issue.record("accepted a string timestamp")
        } catch {
            #expect(error == .badField("aps.timestamp", expected: "a number"))
            #expect(error.description == "aps.timestamp in the APNs payload must be a number")
        }
        func make(_ text: String) throws(APNsPayloadError) -> LiveActivityEvent {
            try LiveActivityEvent.pushSent(apnsPayload: Data(text.utf8), pushToken: Self.token, status: 200,
                                           latencyMs: 1, activityID: "A")
        }
        #expect(throws: APNsPayloadError.badField("aps.event", expected: "a string")) { try make(#"{"aps": {"event": 1}}"#) }
        #expect(throws: APNsPayloadError.badField("aps", expected: "an object")) { try make(#"{"aps": "update"}"#) }
        #expect(throws: APNsPayloadError.badField("aps.stale-date", expected: "a number")) {
            try make(#"{"aps": {"event": "update", "stale-date": "soon"}}"#)
        }
    }

    /// A request to the broadcast endpoint: the same payload, to a channel, answered with an
    /// `apns-request-id` (and in development an `apns-unique-id`); no token, no activity.
    @Test func aBroadcastRequestBecomesPushSent() throws {
        let event = try LiveActivityEvent.pushSent(
            apnsPayload: Self.update, channelID: "Y2hhbm5lbC1h", priority: .low, expiration: 0, status: 200,
            apnsRequestID: "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b", apnsUniqueID: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
            latencyMs: 20.5, occurredAt: Samples.at(100), app: "com.example.ride-backend", id: "bc-1")
        guard case .pushSent(let push) = event.payload else { Issue.record("not push.sent"); return }
        #expect(push == PushSent(broadcast: .update, channelID: "Y2hhbm5lbC1h", status: 200, latencyMs: 20.5, priority: .low,
                                 apnsRequestID: "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b",
                                 apnsUniqueID: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d", expiration: 0,
                                 payloadBytes: Self.update.count, timestamp: Samples.at(100), contentState: Samples.ride,
                                 staleDate: Samples.at(400), relevanceScore: 25,
                                 alert: ActivityAlert(title: "Ana is on her way", body: "7 minutes")))
        #expect(event.activityID == nil && event.bookingID == nil && event.attributesType == nil)
        #expect(String(decoding: try event.jsonData(), as: UTF8.self) == """
            {"alert":{"body":"7 minutes","title":"Ana is on her way"},"apns_request_id":"5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b",\
            "apns_unique_id":"a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d","app":"com.example.ride-backend","channel_id":"Y2hhbm5lbC1h",\
            "content_state":{"driverName":"Ana","duration":7,"progress":0.4,"rating":"4.9"},"event":"update","expiration":0,\
            "id":"bc-1","latency_ms":20.5,"occurred_at":"2026-11-18T11:08:20Z","payload_bytes":\(Self.update.count),"priority":5,\
            "relevance_score":25,"stale_date":"2026-11-18T11:13:20Z","status":200,"timestamp":"2026-11-18T11:08:20Z","type":"push.sent"}
            """)
    }

    @Test func aBroadcastCannotStartAnActivity() {
        let start = Data(#"{"aps": {"event": "start", "attributes-type": "LiveActivityAttributes", "content-state": {}}}"#.utf8)
        #expect(throws: APNsPayloadError.startOnChannel) {
            try LiveActivityEvent.pushSent(apnsPayload: start, channelID: "Y2hhbm5lbC1h", status: 200, latencyMs: 1)
        }
        // The payload is checked as for a push to a token.
        #expect(throws: APNsPayloadError.missingAPS) {
            try LiveActivityEvent.pushSent(apnsPayload: Data(#"{"alert": "hi"}"#.utf8), channelID: "c", status: 200, latencyMs: 1)
        }
        #expect(throws: APNsPayloadError.badField("aps.timestamp", expected: "a number")) {
            try LiveActivityEvent.pushSent(apnsPayload: Data(#"{"aps": {"event": "end", "timestamp": "now"}}"#.utf8),
                                           channelID: "c", status: 200, latencyMs: 1)
        }
        #expect(throws: Never.self) {
            try LiveActivityEvent.pushSent(apnsPayload: Self.end, channelID: "c", status: 400, reason: "BadExpirationDate",
                                           latencyMs: 1)
        }
    }

    /// A create request's body and APNs' answer: 201 with the channel in `apns-channel-id`.
    @Test func aChannelCreateBecomesChannelCreated() throws {
        let body = Data(#"{"message-storage-policy": 1, "push-type": "LiveActivity"}"#.utf8)
        let created = try LiveActivityEvent.channelCreated(requestBody: body, status: 201, channelID: "Y2hhbm5lbC1h",
                                                           latencyMs: 85.5, occurredAt: Samples.at(0), id: "ch-1")
        #expect(created.payload == .channelCreated(ChannelCreated(channelID: "Y2hhbm5lbC1h", status: 201,
                                                                  storagePolicy: .mostRecentMessage, latencyMs: 85.5)))
        #expect(created.activityID == nil && created.bookingID == nil && created.attributesType == nil)
        #expect(String(decoding: try created.jsonData(), as: UTF8.self)
                == #"{"channel_id":"Y2hhbm5lbC1h","id":"ch-1","latency_ms":85.5,"occurred_at":"2026-11-18T11:06:40Z","status":201,"storage_policy":1,"type":"channel.created"}"#)

        let quiet = try LiveActivityEvent.channelCreated(
            requestBody: Data(#"{"push-type": "LiveActivity", "message-storage-policy": 0}"#.utf8), status: 201,
            channelID: "cXVpZXQ=", latencyMs: 1)
        #expect(quiet.payload == .channelCreated(ChannelCreated(channelID: "cXVpZXQ=", status: 201, storagePolicy: .noStorage,
                                                                latencyMs: 1)))
        // Refused: no channel; a policy APNs does not know is left out (the answer says what went wrong).
        let refused = try LiveActivityEvent.channelCreated(
            requestBody: Data(#"{"message-storage-policy": 2, "push-type": "LiveActivity"}"#.utf8), status: 400,
            channelID: nil, reason: LiveActivityEvent.apnsReason(fromResponseBody: Data(#"{"reason":"CannotCreateChannelConfig"}"#.utf8)),
            latencyMs: 30)
        #expect(refused.payload == .channelCreated(ChannelCreated(channelID: nil, status: 400, reason: "CannotCreateChannelConfig",
                                                                  latencyMs: 30)))
        #expect(try LiveActivityEvent.channelCreated(requestBody: Data("not json".utf8), status: 0, channelID: nil,
                                                     latencyMs: 10_000).payload
                == .channelCreated(ChannelCreated(channelID: nil, status: 0, latencyMs: 10_000)))
    }

    /// The monitor refuses a created channel without its id: the helper says so up front.
    @Test func aCreatedChannelNeedsItsID() {
        let body = Data(#"{"message-storage-policy": 1, "push-type": "LiveActivity"}"#.utf8)
        for channelID in [nil, ""] as [String?] {
            #expect(throws: APNsPayloadError.missingChannelID) {
                try LiveActivityEvent.channelCreated(requestBody: body, status: 201, channelID: channelID, latencyMs: 1)
            }
        }
        #expect(APNsPayloadError.missingChannelID.description.contains("apns-channel-id"))
    }

    @Test func aChannelDeleteBecomesChannelDeleted() throws {
        let deleted = LiveActivityEvent.channelDeleted(channelID: "Y2hhbm5lbC1h", status: 204, latencyMs: 40,
                                                       occurredAt: Samples.at(60), id: "ch-3")
        #expect(String(decoding: try deleted.jsonData(), as: UTF8.self)
                == #"{"channel_id":"Y2hhbm5lbC1h","id":"ch-3","latency_ms":40,"occurred_at":"2026-11-18T11:07:40Z","status":204,"type":"channel.deleted"}"#)
        let unknown = LiveActivityEvent.channelDeleted(channelID: "bm9uZQ==", status: 404, reason: "BadChannelId", latencyMs: 12)
        #expect(unknown.payload == .channelDeleted(ChannelDeleted(channelID: "bm9uZQ==", status: 404, reason: "BadChannelId",
                                                                  latencyMs: 12)))
    }

    @Test func theReasonIsReadFromAnAPNsErrorBody() {
        #expect(LiveActivityEvent.apnsReason(fromResponseBody: Data(#"{"reason":"BadDeviceToken"}"#.utf8)) == "BadDeviceToken")
        #expect(LiveActivityEvent.apnsReason(fromResponseBody: Data(#"{"reason":"Unregistered","timestamp":1795000000000}"#.utf8)) == "Unregistered")
        #expect(LiveActivityEvent.apnsReason(fromResponseBody: Data()) == nil)
        #expect(LiveActivityEvent.apnsReason(fromResponseBody: Data("<html>".utf8)) == nil)
    }

    /// A backend that writes `aps.timestamp` in milliseconds: the push reaches the monitor, which
    /// stores it as sent and warns (the card would freeze on the phone), rather than a 422 the
    /// reporter would drop.
    @Test func aTimestampInMillisecondsReachesTheMonitor() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url, app: "com.example.ride"),
                                        sleep: SleepRecorder().immediate)
        let milliseconds = Data(String(decoding: Self.update, as: UTF8.self)
            .replacingOccurrences(of: "1795000100", with: "1795000100000").utf8)
        await reporter.report(.started(activityID: "A1B2", bookingID: "BK-1042", attributesType: "LiveActivityAttributes",
                                       ActivityStarted(contentState: Samples.ride), occurredAt: Samples.at(0)))
        await reporter.report(try LiveActivityEvent.pushSent(apnsPayload: milliseconds, pushToken: Self.token, status: 200,
                                                             latencyMs: 38.2, activityID: "A1B2", occurredAt: Samples.at(100)))
        #expect(await reporter.flush())
        #expect(await reporter.statistics.accepted == 2)
        #expect(await reporter.statistics.rejected == 0)
        let push = try #require(try await server.events(booking: "BK-1042").values.first { $0["type"] == "push.sent" })
        #expect(push["timestamp"] == 1_795_000_100_000)
        #expect(push["effect"]?.objectValue?["warnings"] == .array(["timestamp_in_future"]), "\(push)")
    }

    @Test func theRideBackendsPushesShowInTheMetrics() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url, app: "com.example.ride"),
                                        sleep: SleepRecorder().immediate)
        await reporter.report(.started(activityID: "A1B2", bookingID: "BK-1042", attributesType: "LiveActivityAttributes",
                                       ActivityStarted(contentState: Samples.ride), occurredAt: Samples.at(0)))
        await reporter.report(.tokenUpdated(activityID: "A1B2", pushToken: Self.token, occurredAt: Samples.at(1)))
        await reporter.report(try LiveActivityEvent.pushSent(apnsPayload: Self.update, pushToken: Self.token, status: 200,
                                                             latencyMs: 38.2, activityID: "A1B2", occurredAt: Samples.at(100)))
        await reporter.report(try LiveActivityEvent.pushSent(apnsPayload: Self.end, pushToken: Self.token, status: 410,
                                                             reason: LiveActivityEvent.apnsReason(fromResponseBody: Data(#"{"reason":"Unregistered"}"#.utf8)),
                                                             latencyMs: 51, activityID: "A1B2", occurredAt: Samples.at(200)))
        #expect(await reporter.flush())
        #expect(await reporter.statistics.accepted == 4)

        let ok = #"liveactivity_push_requests_total{event="update",priority="10",reason="none",status="200"}"#
        let gone = #"liveactivity_push_requests_total{event="end",priority="10",reason="Unregistered",status="410"}"#
        #expect(try await server.metric(ok) == 1)
        #expect(try await server.metric(gone) == 1)
        #expect(try await server.metric(#"liveactivity_push_tokens_invalidated_total{reason="Unregistered"}"#) == 1)
        let activity = try #require(try await server.json("/api/activities/A1B2").objectValue)
        #expect(activity["app"] == "com.example.ride")
        #expect(activity["content_state"] == Samples.ride)
        #expect(activity["token"]?.objectValue?["invalidated"] == true)
    }
}
