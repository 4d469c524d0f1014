/// ActivityKit's `ActivityState`, as the lock screen would show it.
public enum ActivityState: String, Sendable, CaseIterable {
    case active, stale, ended, dismissed, pending

    /// The states a phone still shows (the `liveactivity_activities` gauge's `state` label).
    public static let visible: [ActivityState] = [.active, .stale, .ended]
    /// The states `liveactivity_activities` counts: the visible ones, and `pending` (a scheduled
    /// start not yet reached), in the order of the list API's `counts`.
    public static let counted: [ActivityState] = visible + [.pending]
}
