import Synchronization

/// A thread-safe counter without labels.
public final class Counter: MetricCollector {
    public let name: String
    public let help: String
    private let current = Mutex<Double>(0)

    /// A counter at zero. `name` should end in `_total`.
    public init(name: String, help: String) {
        precondition(MetricNaming.isValidMetricName(name), "invalid metric name \"\(name)\"")
        self.name = name
        self.help = help
    }

    /// Adds `amount`, which must be >= 0 (a counter never goes down).
    public func inc(by amount: Double = 1) {
        precondition(amount >= 0, "\(name): counter increment must be >= 0, got \(amount)")
        current.withLock { $0 += amount }
    }

    /// The current value.
    public var value: Double {
        current.withLock { $0 }
    }

    /// The family with one sample.
    public func family() -> MetricFamily {
        MetricFamily(name: name, help: help, type: .counter, samples: [Sample(value: value)])
    }

    public func collect() -> [MetricFamily] {
        [family()]
    }
}
