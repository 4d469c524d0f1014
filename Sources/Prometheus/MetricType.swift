/// The `# TYPE` of a metric family in the text exposition format.
public enum MetricType: String, Sendable {
    case counter
    case gauge
    case histogram
    case untyped
}
