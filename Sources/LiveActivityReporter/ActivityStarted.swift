import Foundation
import LiveActivityWire

/// `activity.started`: the app requested an activity (or one started by push-to-start
/// appeared). Needs `activity_id`, `booking_id` and `attributes_type` on the event.
public struct ActivityStarted: EventPayload, Hashable {
    static let kind = LiveActivityEvent.Kind.activityStarted

    /// How the activity came to be.
    public typealias Source = StartSource

    /// The initial content state (required).
    public var contentState: JSONContent
    /// The static `ActivityAttributes`.
    public var attributes: JSONContent?
    public var staleDate: Date?
    public var relevanceScore: Double?
    /// The update token, when ActivityKit already has one (it usually arrives a moment later:
    /// report it then with `activity.token_updated`).
    public var pushToken: PushToken?
    /// `app` when absent.
    public var source: Source?
    /// Your app's installation id (the one its `device.push_to_start_token` events carry).
    public var deviceID: String?
    /// A scheduled start (iOS 26): the activity is `pending` until then.
    public var startDate: Date?
    /// The broadcast channel the activity receives (`pushType: .channel(id)`).
    public var channelID: String?

    public init(contentState: JSONContent, attributes: JSONContent? = nil, staleDate: Date? = nil,
                relevanceScore: Double? = nil, pushToken: PushToken? = nil, source: Source? = nil,
                deviceID: String? = nil, startDate: Date? = nil, channelID: String? = nil) {
        self.contentState = contentState
        self.attributes = attributes
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
        self.pushToken = pushToken
        self.source = source
        self.deviceID = deviceID
        self.startDate = startDate
        self.channelID = channelID
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case contentState = "content_state"
        case attributes
        case staleDate = "stale_date"
        case relevanceScore = "relevance_score"
        case pushToken = "push_token"
        case source
        case deviceID = "device_id"
        case startDate = "start_date"
        case channelID = "channel_id"
    }
    typealias Field = CodingKeys
}
