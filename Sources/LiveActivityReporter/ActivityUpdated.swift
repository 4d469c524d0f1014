import Foundation

/// `activity.updated`: the app updated the activity's content itself (`Activity.update`).
/// Updates sent by push are reported by the backend as `push.sent` instead.
public struct ActivityUpdated: EventPayload, Hashable {
    static let kind = LiveActivityEvent.Kind.activityUpdated

    /// The new content state (required); it replaces the old one whole.
    public var contentState: JSONContent
    /// When the content was produced; `occurred_at` when absent. The phone ignores content
    /// that is not newer than what it shows, and so does the monitor.
    public var timestamp: Date?
    public var staleDate: Date?
    public var relevanceScore: Double?
    public var alert: ActivityAlert?

    public init(contentState: JSONContent, timestamp: Date? = nil, staleDate: Date? = nil,
                relevanceScore: Double? = nil, alert: ActivityAlert? = nil) {
        self.contentState = contentState
        self.timestamp = timestamp
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
        self.alert = alert
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case contentState = "content_state"
        case timestamp
        case staleDate = "stale_date"
        case relevanceScore = "relevance_score"
        case alert
    }
    typealias Field = CodingKeys
}
