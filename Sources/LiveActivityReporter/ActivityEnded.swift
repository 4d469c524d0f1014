import Foundation
import LiveActivityWire

/// `activity.ended`: the activity ended (the app called `Activity.end`, or ActivityKit
/// reported it ended). It stays on the lock screen until its dismissal.
public struct ActivityEnded: EventPayload, Hashable {
    static let kind = LiveActivityEvent.Kind.activityEnded

    /// ActivityKit's dismissal policies.
    public typealias DismissalPolicy = LiveActivityWire.DismissalPolicy

    /// The final content state, if the end brought one.
    public var contentState: JSONContent?
    /// When that content was produced; `occurred_at` when absent.
    public var timestamp: Date?
    public var dismissalDate: Date?
    public var dismissalPolicy: DismissalPolicy?

    public init(contentState: JSONContent? = nil, timestamp: Date? = nil, dismissalDate: Date? = nil,
                dismissalPolicy: DismissalPolicy? = nil) {
        self.contentState = contentState
        self.timestamp = timestamp
        self.dismissalDate = dismissalDate
        self.dismissalPolicy = dismissalPolicy
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case contentState = "content_state"
        case timestamp
        case dismissalDate = "dismissal_date"
        case dismissalPolicy = "dismissal_policy"
    }
    typealias Field = CodingKeys
}
