/// A change that time alone made to an activity (`StateEngine.advance`): its stale date passed,
/// the system ended it at 8 hours, or it left the lock screen. The booking view lists them
/// among the events.
public struct TimeTransition: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable {
        case stale, ended, dismissed
    }

    public var kind: Kind
    /// When it happened (the stale date, the 8-hour end, the end of visibility), not when the
    /// engine noticed.
    public var at: Double
}
