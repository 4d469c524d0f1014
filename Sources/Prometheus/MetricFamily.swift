/// A metric name with its help text, type and samples: what one `# HELP` / `# TYPE` block renders.
public struct MetricFamily: Sendable {
    /// The metric name, including any `_total` suffix; checked against the Prometheus rules.
    public var name: String
    /// One line of help text; escaped on output.
    public var help: String
    public var type: MetricType
    /// Samples in any order; ``TextFormat`` sorts them by labels.
    public var samples: [Sample]

    public init(name: String, help: String, type: MetricType, samples: [Sample] = []) {
        precondition(MetricNaming.isValidMetricName(name), "invalid metric name \"\(name)\"")
        self.name = name
        self.help = help
        self.type = type
        self.samples = samples
    }
}
