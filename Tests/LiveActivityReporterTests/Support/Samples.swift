import Foundation
@testable import LiveActivityReporter

/// Realistic events of every type with every field set, in an order the monitor accepts:
/// the ride app's booking BK-1042 from start to dismissal, plus a push-to-start, a broadcast to
/// the channel the activity subscribed to, and that channel's creation and deletion.
enum Samples {
    static func at(_ seconds: Double) -> Date { Date(timeIntervalSince1970: LiveServer.base + seconds) }

    static let token = PushToken(hex: "80a1f3" + String(repeating: "0123456789abcdef", count: 4))
    static let rotatedToken = PushToken(hex: "77b2c4" + String(repeating: "fedcba9876543210", count: 4))
    static let pushToStartToken = PushToken(hex: "5c7a" + String(repeating: "0f1e2d3c4b5a6978", count: 4))
    static let ride: JSONContent = ["driverName": "Ana", "rating": "4.9", "progress": 0.4, "duration": 7]
    static let attributes: JSONContent = ["name": "Live Activity", "tags": ["ride", 1, true, nil]]

    static func everyKind(activityID: String = "A1B2", booking: String = "BK-1042",
                          pushStartBooking: String = "BK-2000") -> [LiveActivityEvent] {
        [
            .started(activityID: activityID, bookingID: booking, attributesType: "LiveActivityAttributes",
                     ActivityStarted(contentState: ride, attributes: attributes, staleDate: at(900),
                                     relevanceScore: 50, pushToken: token, source: .app, deviceID: "device-7",
                                     startDate: at(0), channelID: "ride-updates"),
                     occurredAt: at(0), app: "com.example.ride", id: "ev-started"),
            .tokenUpdated(activityID: activityID, pushToken: rotatedToken, occurredAt: at(1.5),
                          app: "com.example.ride", id: "ev-token"),
            .updated(activityID: activityID,
                     ActivityUpdated(contentState: ["driverName": "Ana", "rating": "4.9", "progress": 0.5, "duration": 6],
                                     timestamp: at(2), staleDate: at(960), relevanceScore: 60,
                                     alert: ActivityAlert(title: "Ana is close", body: "6 minutes away")),
                     occurredAt: at(2.25), app: "com.example.ride", id: "ev-updated"),
            .pushSent(activityID: activityID,
                      PushSent(event: .update, status: 200, latencyMs: 42.5, pushToken: rotatedToken, priority: .high,
                               reason: "none-given", apnsID: "0d4c3f2e-6f5a-4b1c-9d8e-7f6a5b4c3d2e",
                               apnsUniqueID: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d", payloadBytes: 231,
                               timestamp: at(3), contentState: ["driverName": "Ana", "rating": "4.9", "progress": 0.8, "duration": 2],
                               staleDate: at(1000), dismissalDate: at(4000), relevanceScore: 70,
                               alert: ActivityAlert(title: "Almost there", body: "2 minutes"),
                               attributes: ["name": "Live Activity"]),
                      bookingID: booking, attributesType: "LiveActivityAttributes", occurredAt: at(3.125),
                      app: "com.example.ride-backend", id: "ev-push"),
            // The phone shows the push's content: delivery evidence that confirms it.
            .observed(activityID: activityID,
                      ActivityObserved(contentState: ["driverName": "Ana", "rating": "4.9", "progress": 0.8, "duration": 2],
                                       staleDate: at(1000), relevanceScore: 70),
                      occurredAt: at(4), app: "com.example.ride", id: "ev-observed"),
            .stale(activityID: activityID, occurredAt: at(1001), app: "com.example.ride", id: "ev-stale"),
            .ended(activityID: activityID,
                   ActivityEnded(contentState: ["driverName": "Ana", "rating": "4.9", "progress": 1.0, "duration": 0],
                                 timestamp: at(1100), dismissalDate: at(1130), dismissalPolicy: .after),
                   occurredAt: at(1100.5), app: "com.example.ride", id: "ev-ended"),
            .dismissed(activityID: activityID, occurredAt: at(1130), app: "com.example.ride", id: "ev-dismissed"),
            // Push-to-start: no activity id yet, so booking and attributes type are required.
            .pushSent(activityID: nil,
                      PushSent(event: .start, status: 200, latencyMs: 12, pushToken: token, priority: .low,
                               payloadBytes: 300, timestamp: at(5), contentState: ride, attributes: attributes,
                               pushToStartToken: pushToStartToken, inputPushChannel: "ride-updates"),
                      bookingID: pushStartBooking, attributesType: "LiveActivityAttributes", occurredAt: at(5),
                      id: "ev-push-start"),
            // A broadcast: to a channel, naming no activity and no token.
            .pushSent(activityID: nil,
                      PushSent(broadcast: .update, channelID: "ride-updates", status: 200, latencyMs: 20, priority: .broadcastLowest,
                               apnsRequestID: "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b", expiration: 0, timestamp: at(6),
                               contentState: ["driverName": "Ana", "rating": "4.9", "progress": 0.9, "duration": 1]),
                      occurredAt: at(6), id: "ev-broadcast"),
            // The channel's management results: no activity, booking or attributes type.
            .channelCreated(ChannelCreated(channelID: "ride-updates", status: 201, reason: "none-given",
                                           storagePolicy: .mostRecentMessage, latencyMs: 85.5),
                            occurredAt: at(-30), app: "com.example.ride-backend", id: "ev-channel-created"),
            .channelDeleted(ChannelDeleted(channelID: "ride-updates", status: 204, reason: "none-given", latencyMs: 40.25),
                            occurredAt: at(1200), app: "com.example.ride-backend", id: "ev-channel-deleted"),
        ]
    }

    /// `count` small events of one activity: a start, then updates.
    static func series(_ count: Int, activityID: String = "T1", booking: String = "BK-T1",
                       prefix: String = "e") -> [LiveActivityEvent] {
        (0..<count).map { i in
            let id = prefix + String(format: "%02d", i)
            if i == 0 {
                return .started(activityID: activityID, bookingID: booking, attributesType: "TimerWidgetAttributes",
                                ActivityStarted(contentState: ["startedAt": 817_000_000]), occurredAt: at(0), id: id)
            }
            return .updated(activityID: activityID, ActivityUpdated(contentState: ["startedAt": .integer(817_000_000 + Int64(i))]),
                            occurredAt: at(Double(i)), id: id)
        }
    }
}
