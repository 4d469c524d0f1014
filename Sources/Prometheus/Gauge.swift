import Synchronization

/// A thread-safe gauge without labels.
public final class Gauge: MetricCollector {
    public let name: String
    public let help: String
    private let current = Mutex<Double>(0)

    /// A gauge at zero.
    public init(name: String, help: String) {
        precondition(MetricNaming.isValidMetricName(name), "invalid metric name \"\(name)\"")
        self.name = name
        self.help = help
    }

    /// Sets the value.
    public func set(_ value: Double) {
        current.withLock { $0 = value }
    }

    /// Adds `amount` (may be negative).
    public func inc(by amount: Double = 1) {
        current.withLock { $0 += amount }
    }

    /// Subtracts `amount`.
    public func dec(by amount: Double = 1) {
        current.withLock { $0 -= amount }
    }

    /// The current value.
    public var value: Double {
        current.withLock { $0 }
    }

    /// The family with one sample.
    public func family() -> MetricFamily {
        MetricFamily(name: name, help: help, type: .gauge, samples: [Sample(value: value)])
    }

    public func collect() -> [MetricFamily] {
        [family()]
    }
}
