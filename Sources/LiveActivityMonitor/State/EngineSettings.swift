/// The operator's settings that rules depend on (DESIGN.md sections 4 and 7): one value, given
/// to every `StateEngine` (the writer's and each replay's), so that a replay judges as the
/// writer did.
public struct EngineSettings: Sendable, Equatable {
    /// `--delivery-grace`: how long after a push an observation that does not show it makes it
    /// `missed` (APNs and the phone may take that long to deliver it).
    public var deliveryGrace: Double
    /// `--start-window`: how long after a start push the device's `activity.started` makes it
    /// `started`; once it has passed, the push is `not_started`.
    public var startWindow: Double

    /// `--priority10-budget`: an activity sent more priority-10 pushes in the last hour is
    /// heavy (`liveactivity_priority10_heavy_activities`, the read API's `priority10_heavy`).
    public var priority10Budget: Int

    public static let defaultDeliveryGrace = 120.0
    public static let defaultPriority10Budget = 15
    public static let defaultStartWindow = 900.0

    public init(deliveryGrace: Double = EngineSettings.defaultDeliveryGrace,
                startWindow: Double = EngineSettings.defaultStartWindow,
                priority10Budget: Int = EngineSettings.defaultPriority10Budget) {
        self.deliveryGrace = deliveryGrace
        self.startWindow = startWindow
        self.priority10Budget = priority10Budget
    }
}
