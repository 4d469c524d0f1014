import Foundation

/// `channel.created`: the backend asked APNs' channel management API for a broadcast channel
/// (`POST /1/apps/<bundle>/channels`), and APNs answered. Build it from the request and the
/// answer with `LiveActivityEvent.channelCreated(requestBody:…)`, or field by field.
///
/// A channel request names a channel, never an activity: the event carries no `activity_id`,
/// `booking_id` or `attributes_type`.
public struct ChannelCreated: EventPayload, Hashable {
    static let kind = LiveActivityEvent.Kind.channelCreated

    /// The request's `message-storage-policy`.
    public enum StoragePolicy: Int, Sendable, Hashable, Encodable, CaseIterable {
        /// 0: APNs keeps no message; a broadcast must then have `apns-expiration` 0.
        case noStorage = 0
        /// 1: APNs keeps the most recent message (up to 8 h) for devices that were offline.
        case mostRecentMessage = 1
    }

    /// The `apns-channel-id` of APNs' answer: the new channel. Required when `status` is 2xx
    /// (APNs answers 201); nil when APNs refused the request (no channel was created).
    public var channelID: String?
    /// The HTTP status APNs answered (201 when created); 0 when no answer came.
    public var status: Int
    /// APNs' `reason` on an error answer, e.g. `CannotCreateChannelConfig`, `FeatureNotEnabled`.
    public var reason: String?
    /// The `message-storage-policy` asked for.
    public var storagePolicy: StoragePolicy?
    /// From sending the request to APNs' answer (or to giving up), in milliseconds.
    public var latencyMs: Double?

    public init(channelID: String?, status: Int, reason: String? = nil, storagePolicy: StoragePolicy? = nil,
                latencyMs: Double? = nil) {
        self.channelID = channelID
        self.status = status
        self.reason = reason
        self.storagePolicy = storagePolicy
        self.latencyMs = latencyMs
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case channelID = "channel_id"
        case status, reason
        case storagePolicy = "storage_policy"
        case latencyMs = "latency_ms"
    }
    typealias Field = CodingKeys
}
