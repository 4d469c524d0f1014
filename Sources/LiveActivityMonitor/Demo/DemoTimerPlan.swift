/// How one simulated workout timer goes (seed 000: `TimerWidgetAttributes`, content
/// `{startedAt}`): started and stopped from the app, which pushes nothing. A pause is shown
/// as `pausedAt`; resuming moves `startedAt` forward by the pause, so the `.timer` text keeps
/// counting from where it stopped.
struct DemoTimerPlan: Sendable {
    enum Ending: Sendable {
        /// Stopped in the app, removed from the lock screen at once.
        case stopImmediately
        /// Stopped in the app, left on the lock screen for this many seconds.
        case stopAndLinger(Double)
        /// The user swiped it away (`activity.dismissed`).
        case swipedAway
    }

    /// Seconds from the start to the end.
    var duration: Double = 120
    /// Seconds after the start when the user pauses, and how long the pause lasts.
    var pauseAt: Double?
    var pauseLength: Double = 20
    var ending = Ending.stopImmediately

    static func random(_ r: inout DemoRandom) -> DemoTimerPlan {
        var p = DemoTimerPlan()
        p.duration = r.double(45...240)
        if r.chance(0.4) {
            p.pauseAt = r.double(10...(p.duration * 0.6))
            p.pauseLength = r.double(10...min(40, p.duration * 0.3))
        }
        let u = r.unit()
        p.ending = u < 0.65 ? .stopImmediately : u < 0.9 ? .stopAndLinger(r.double(20...90)) : .swipedAway
        return p
    }
}
