import Synchronization

/// A thread-safe histogram without labels.
public final class Histogram: MetricCollector {
    public let name: String
    public let help: String
    private let current: Mutex<HistogramValue>

    /// An empty histogram with the given bucket bounds (finite, strictly increasing; +Inf implied).
    public init(name: String, help: String, upperBounds: [Double]) {
        precondition(MetricNaming.isValidMetricName(name), "invalid metric name \"\(name)\"")
        self.name = name
        self.help = help
        current = Mutex(HistogramValue(upperBounds: upperBounds))
    }

    /// Records one observation.
    public func observe(_ value: Double) {
        current.withLock { $0.observe(value) }
    }

    /// A snapshot of the current state.
    public var value: HistogramValue {
        current.withLock { $0 }
    }

    /// The family with one sample.
    public func family() -> MetricFamily {
        MetricFamily(name: name, help: help, type: .histogram, samples: [Sample(histogram: value)])
    }

    public func collect() -> [MetricFamily] {
        [family()]
    }
}
