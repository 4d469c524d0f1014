import Foundation

/// `channel.deleted`: the backend asked APNs' channel management API to delete a broadcast
/// channel (`DELETE /1/apps/<bundle>/channels` with the `apns-channel-id` header), and APNs
/// answered. From a 2xx answer (APNs answers 204) on, the monitor takes a broadcast to that
/// channel as `unknown_channel`.
///
/// A channel request names a channel, never an activity: the event carries no `activity_id`,
/// `booking_id` or `attributes_type`.
public struct ChannelDeleted: EventPayload, Hashable {
    static let kind = LiveActivityEvent.Kind.channelDeleted

    /// The channel asked to be deleted (the request's `apns-channel-id`).
    public var channelID: String
    /// The HTTP status APNs answered (204 when deleted); 0 when no answer came.
    public var status: Int
    /// APNs' `reason` on an error answer, e.g. `BadChannelId`.
    public var reason: String?
    /// From sending the request to APNs' answer (or to giving up), in milliseconds.
    public var latencyMs: Double?

    public init(channelID: String, status: Int, reason: String? = nil, latencyMs: Double? = nil) {
        self.channelID = channelID
        self.status = status
        self.reason = reason
        self.latencyMs = latencyMs
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case channelID = "channel_id"
        case status, reason
        case latencyMs = "latency_ms"
    }
    typealias Field = CodingKeys
}
