/// The value of one sample: a number for counters, gauges and untyped metrics,
/// a whole histogram for histograms.
public enum SampleValue: Sendable, Equatable {
    case number(Double)
    case histogram(HistogramValue)
}
