/// ActivityKit's `ActivityState`, as the lock screen would show it.
public enum ActivityState: String, Sendable, CaseIterable {
    case active, stale, ended, dismissed, pending

    /// The states a phone still shows (the `liveactivity_activities` gauge's `state` label).
    public static let visible: [ActivityState] = [.active, .stale, .ended]
}
