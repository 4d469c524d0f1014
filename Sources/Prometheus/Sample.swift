/// One series of a family: its labels and its value.
public struct Sample: Sendable {
    public var labels: Labels
    public var value: SampleValue

    public init(labels: Labels = Labels(), value: SampleValue) {
        self.labels = labels
        self.value = value
    }

    /// A numeric sample (counter, gauge or untyped).
    public init(labels: Labels = Labels(), value: Double) {
        self.init(labels: labels, value: .number(value))
    }

    /// A histogram sample.
    public init(labels: Labels = Labels(), histogram: HistogramValue) {
        self.init(labels: labels, value: .histogram(histogram))
    }
}
