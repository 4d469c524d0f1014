import Synchronization

/// A thread-safe gauge with labels, one series per distinct list of label values.
public final class GaugeVec: MetricCollector {
    public let name: String
    public let help: String
    private let schema: LabelSchema
    private let series = Mutex<[[String]: Double]>([:])

    /// A gauge with no series yet. `labelNames` are fixed; every call passes one value per name,
    /// in this order.
    public init(name: String, help: String, labelNames: [String]) {
        schema = LabelSchema(metric: name, names: labelNames)
        self.name = name
        self.help = help
    }

    /// The label names, in the order values are passed.
    public var labelNames: [String] { schema.names }

    /// Sets the series with these label values.
    public func set(_ labels: [String], to value: Double) {
        schema.check(labels)
        series.withLock { $0[labels] = value }
    }

    /// Adds `amount` (may be negative) to the series, creating it at zero if new.
    public func inc(_ labels: [String], by amount: Double = 1) {
        schema.check(labels)
        series.withLock { $0[labels, default: 0] += amount }
    }

    /// Subtracts `amount` from the series, creating it at zero if new.
    public func dec(_ labels: [String], by amount: Double = 1) {
        inc(labels, by: -amount)
    }

    /// Removes the series, so it is no longer exported.
    public func remove(_ labels: [String]) {
        schema.check(labels)
        _ = series.withLock { $0.removeValue(forKey: labels) }
    }

    /// The value of one series, or nil if it does not exist.
    public func value(_ labels: [String]) -> Double? {
        schema.check(labels)
        return series.withLock { $0[labels] }
    }

    /// The family with one sample per series.
    public func family() -> MetricFamily {
        let snapshot = series.withLock { $0 }
        return MetricFamily(name: name, help: help, type: .gauge, samples: snapshot.map { values, value in
            Sample(labels: schema.labels(values), value: value)
        })
    }

    public func collect() -> [MetricFamily] {
        [family()]
    }
}
