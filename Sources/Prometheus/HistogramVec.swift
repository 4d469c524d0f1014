import Synchronization

/// A thread-safe histogram with labels, one series per distinct list of label values,
/// all with the same bucket bounds.
public final class HistogramVec: MetricCollector {
    public let name: String
    public let help: String
    /// Bucket upper bounds shared by every series (+Inf implied).
    public let upperBounds: [Double]
    private let schema: LabelSchema
    private let series = Mutex<[[String]: HistogramValue]>([:])

    /// A histogram with no series yet. `labelNames` are fixed (and may not include `le`);
    /// every call passes one value per name, in this order.
    public init(name: String, help: String, labelNames: [String], upperBounds: [Double]) {
        schema = LabelSchema(metric: name, names: labelNames, reserved: ["le"])
        // Validates the bounds once, here, rather than at the first observation.
        _ = HistogramValue(upperBounds: upperBounds)
        self.name = name
        self.help = help
        self.upperBounds = upperBounds
    }

    /// The label names, in the order values are passed.
    public var labelNames: [String] { schema.names }

    /// Records one observation in the series with these label values, creating it if new.
    public func observe(_ labels: [String], value: Double) {
        schema.check(labels)
        series.withLock { series in
            series[labels, default: HistogramValue(upperBounds: upperBounds)].observe(value)
        }
    }

    /// Creates the series empty if it does not exist, so known series are exported before
    /// their first observation.
    public func initialize(_ labels: [String]) {
        schema.check(labels)
        series.withLock { series in
            if series[labels] == nil { series[labels] = HistogramValue(upperBounds: upperBounds) }
        }
    }

    /// A snapshot of one series, or nil if it does not exist.
    public func value(_ labels: [String]) -> HistogramValue? {
        schema.check(labels)
        return series.withLock { $0[labels] }
    }

    /// The family with one sample per series.
    public func family() -> MetricFamily {
        let snapshot = series.withLock { $0 }
        return MetricFamily(name: name, help: help, type: .histogram, samples: snapshot.map { values, value in
            Sample(labels: schema.labels(values), histogram: value)
        })
    }

    public func collect() -> [MetricFamily] {
        [family()]
    }
}
