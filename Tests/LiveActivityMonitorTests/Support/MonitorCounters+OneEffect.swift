@testable import LiveActivityMonitor
import LiveActivityWire

extension MonitorCounters {
    /// Counts one event's effect at once, as a commit's `EffectTally` counts each of its events
    /// (tests that drive the engine without a commit).
    mutating func count(_ effect: EventEffect, of type: EventType) {
        var tally = EffectTally()
        tally.count(effect, of: type)
        tally.add(to: &self)
    }
}
