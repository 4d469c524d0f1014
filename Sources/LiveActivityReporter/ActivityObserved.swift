import Foundation

/// `activity.observed`: what ActivityKit reports the activity shows now (`contentUpdates`, or
/// `activity.content` at launch). Evidence, not an update: the monitor compares it with the
/// contents pushed, to confirm pushes the phone showed and find those it missed.
public struct ActivityObserved: EventPayload, Hashable {
    static let kind = LiveActivityEvent.Kind.activityObserved

    /// The content state shown (required), encoded by the app's own type.
    public var contentState: JSONContent
    public var staleDate: Date?
    public var relevanceScore: Double?

    public init(contentState: JSONContent, staleDate: Date? = nil, relevanceScore: Double? = nil) {
        self.contentState = contentState
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case contentState = "content_state"
        case staleDate = "stale_date"
        case relevanceScore = "relevance_score"
    }
    typealias Field = CodingKeys
}
