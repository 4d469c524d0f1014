/// The fixed numbers of ActivityKit's lifecycle (DESIGN.md section 2).
public enum LockScreenRules {
    /// The system ends an activity 8 hours after it started.
    public static let maxActiveDuration: Double = 8 * 3600
    /// An ended activity stays on the lock screen at most 4 hours…
    public static let maxEndedVisibility: Double = 4 * 3600
    /// …and never longer than 12 hours after it started.
    public static let maxLifetime: Double = 12 * 3600
    /// The window of the priority-10 budget.
    public static let priority10Window: Double = 3600
}
