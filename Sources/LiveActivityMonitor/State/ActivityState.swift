/// ActivityKit's `ActivityState`, as the lock screen would show it.
public enum ActivityState: String, Sendable, CaseIterable {
    case active, stale, ended, dismissed, pending

    /// By case, as the synthesized `==`, but through a `switch`: the synthesized one compares
    /// through a builtin whose effects the optimizer cannot see, so that every record borrowed
    /// in place across a rule that compares states (`state(at:)` and its callers) was first
    /// copied whole, its references retained and released (session 19: about a tenth of
    /// start-up's CPU, in the bulk builds of the gauges, the phone order and the triage sets).
    public static func == (a: ActivityState, b: ActivityState) -> Bool { a.ordinal == b.ordinal }

    /// The case's place, for `==` and for tables by state (a `switch`: a case added is a
    /// compile error here).
    var ordinal: Int {
        switch self {
        case .active: 0
        case .stale: 1
        case .ended: 2
        case .dismissed: 3
        case .pending: 4
        }
    }

    /// The states a phone still shows (the `liveactivity_activities` gauge's `state` label).
    public static let visible: [ActivityState] = [.active, .stale, .ended]
    /// The states `liveactivity_activities` counts: the visible ones, and `pending` (a scheduled
    /// start not yet reached), in the order of the list API's `counts`.
    public static let counted: [ActivityState] = visible + [.pending]
}
