import Foundation
import LiveActivityWire

/// `push.sent`: one APNs request the backend made, and APNs' answer. Build it from the request
/// you sent with `LiveActivityEvent.pushSent(apnsPayload:…)`, or field by field.
public struct PushSent: EventPayload, Hashable {
    static let kind = LiveActivityEvent.Kind.pushSent

    /// The payload's `aps.event`.
    public typealias Event = PushKind

    /// `apns-priority`.
    public enum Priority: Int, Sendable, Hashable, Encodable, CaseIterable {
        /// 1: broadcast only (a channel's lowest priority).
        case broadcastLowest = 1
        /// 5: delivered when power allows; not budgeted.
        case low = 5
        /// 10: delivered at once; spends the device's undocumented budget (the default).
        case high = 10
    }

    public var event: Event
    /// The HTTP status APNs answered; 0 when no answer came (timeout, connection error).
    public var status: Int
    /// From sending the request to APNs' answer (or to giving up), in milliseconds.
    public var latencyMs: Double
    /// The token the request was sent to (`/3/device/<token>`); nil for a broadcast.
    public var pushToken: PushToken?
    /// `high` (10) when absent.
    public var priority: Priority?
    /// APNs' `reason` on an error answer, e.g. `BadDeviceToken`, `TooManyRequests`.
    public var reason: String?
    /// The `apns-id` response header.
    public var apnsID: String?
    /// The `apns-unique-id` response header (APNs development environment only).
    public var apnsUniqueID: String?
    /// Size of the request body in bytes (APNs allows 4096).
    public var payloadBytes: Int?
    /// The payload's `aps.timestamp`; `occurred_at` when absent.
    public var timestamp: Date?
    /// The payload's `content-state`.
    public var contentState: JSONContent?
    /// The payload's `stale-date`.
    public var staleDate: Date?
    /// The payload's `dismissal-date` (with `end`).
    public var dismissalDate: Date?
    /// The payload's `relevance-score`.
    public var relevanceScore: Double?
    /// The payload's `alert`, when its title and body are plain strings.
    public var alert: ActivityAlert?
    /// The payload's `attributes` (push-to-start).
    public var attributes: JSONContent?
    /// For `event: start`: the push-to-start token it went to (`pushToken` works for it too).
    public var pushToStartToken: PushToken?
    /// For `event: start`: the payload's `input-push-channel`.
    public var inputPushChannel: String?
    /// A broadcast's channel (`apns-channel-id`, `/4/broadcasts/apps/<bundle>`), instead of a token.
    public var channelID: String?
    /// A broadcast's `apns-request-id` response header.
    public var apnsRequestID: String?
    /// The `apns-expiration` header: Unix seconds, 0 for none.
    public var expiration: Int?

    public init(event: Event, status: Int, latencyMs: Double, pushToken: PushToken, priority: Priority? = nil,
                reason: String? = nil, apnsID: String? = nil, apnsUniqueID: String? = nil,
                payloadBytes: Int? = nil, timestamp: Date? = nil, contentState: JSONContent? = nil,
                staleDate: Date? = nil, dismissalDate: Date? = nil, relevanceScore: Double? = nil,
                alert: ActivityAlert? = nil, attributes: JSONContent? = nil, pushToStartToken: PushToken? = nil,
                inputPushChannel: String? = nil) {
        self.event = event
        self.status = status
        self.latencyMs = latencyMs
        self.pushToken = pushToken
        self.priority = priority
        self.reason = reason
        self.apnsID = apnsID
        self.apnsUniqueID = apnsUniqueID
        self.payloadBytes = payloadBytes
        self.timestamp = timestamp
        self.contentState = contentState
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.relevanceScore = relevanceScore
        self.alert = alert
        self.attributes = attributes
        self.pushToStartToken = pushToStartToken
        self.inputPushChannel = inputPushChannel
    }

    /// A broadcast: one request to a channel, and APNs' answer (`update` or `end`).
    public init(broadcast event: Event, channelID: String, status: Int, latencyMs: Double, priority: Priority? = nil,
                reason: String? = nil, apnsRequestID: String? = nil, apnsUniqueID: String? = nil,
                expiration: Int? = nil, payloadBytes: Int? = nil, timestamp: Date? = nil,
                contentState: JSONContent? = nil, staleDate: Date? = nil, dismissalDate: Date? = nil,
                relevanceScore: Double? = nil, alert: ActivityAlert? = nil) {
        self.event = event
        self.status = status
        self.latencyMs = latencyMs
        self.channelID = channelID
        self.priority = priority
        self.reason = reason
        self.apnsRequestID = apnsRequestID
        self.apnsUniqueID = apnsUniqueID
        self.expiration = expiration
        self.payloadBytes = payloadBytes
        self.timestamp = timestamp
        self.contentState = contentState
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.relevanceScore = relevanceScore
        self.alert = alert
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case event, status
        case latencyMs = "latency_ms"
        case pushToken = "push_token"
        case priority, reason
        case apnsID = "apns_id"
        case apnsUniqueID = "apns_unique_id"
        case payloadBytes = "payload_bytes"
        case timestamp
        case contentState = "content_state"
        case staleDate = "stale_date"
        case dismissalDate = "dismissal_date"
        case relevanceScore = "relevance_score"
        case alert, attributes
        case pushToStartToken = "push_to_start_token"
        case inputPushChannel = "input_push_channel"
        case channelID = "channel_id"
        case apnsRequestID = "apns_request_id"
        case expiration
    }
    typealias Field = CodingKeys
}
