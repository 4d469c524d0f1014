/// ActivityKit's dismissal policies for an ended activity (`activity.ended`'s `dismissal_policy`).
public enum DismissalPolicy: String, Sendable, Hashable, Encodable, CaseIterable {
    /// Up to 4 hours on the lock screen.
    case `default`
    /// Removed at once.
    case immediate
    /// Removed at `dismissal_date` (required with this policy).
    case after
}
