import Synchronization

/// A thread-safe counter with labels, one series per distinct list of label values.
public final class CounterVec: MetricCollector {
    public let name: String
    public let help: String
    private let schema: LabelSchema
    private let series = Mutex<[[String]: Double]>([:])

    /// A counter with no series yet. `labelNames` are fixed; every call passes one value per name,
    /// in this order.
    public init(name: String, help: String, labelNames: [String]) {
        schema = LabelSchema(metric: name, names: labelNames)
        self.name = name
        self.help = help
    }

    /// The label names, in the order values are passed.
    public var labelNames: [String] { schema.names }

    /// Adds `amount` (>= 0) to the series with these label values, creating it at zero if new.
    public func inc(_ labels: [String], by amount: Double = 1) {
        schema.check(labels)
        precondition(amount >= 0, "\(name): counter increment must be >= 0, got \(amount)")
        series.withLock { $0[labels, default: 0] += amount }
    }

    /// Creates the series at zero if it does not exist, so known series are exported before
    /// their first event.
    public func initialize(_ labels: [String]) {
        schema.check(labels)
        series.withLock { series in
            if series[labels] == nil { series[labels] = 0 }
        }
    }

    /// The value of one series (0 if it does not exist).
    public func value(_ labels: [String]) -> Double {
        schema.check(labels)
        return series.withLock { $0[labels] ?? 0 }
    }

    /// The family with one sample per series.
    public func family() -> MetricFamily {
        let snapshot = series.withLock { $0 }
        return MetricFamily(name: name, help: help, type: .counter, samples: snapshot.map { values, value in
            Sample(labels: schema.labels(values), value: value)
        })
    }

    public func collect() -> [MetricFamily] {
        [family()]
    }
}
