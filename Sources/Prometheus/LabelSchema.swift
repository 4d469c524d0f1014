/// The fixed label names of a labelled instrument (`CounterVec`, `GaugeVec`, `HistogramVec`),
/// validated once at init, turning label values given in declaration order into ``Labels``.
struct LabelSchema: Sendable {
    /// The names in declaration order, as callers pass values.
    let names: [String]
    private let sortedNames: [String]
    /// `order[i]` is the declaration index of the i-th name in sorted order.
    private let order: [Int]

    init(metric: String, names: [String], reserved: Set<String> = []) {
        precondition(MetricNaming.isValidMetricName(metric), "invalid metric name \"\(metric)\"")
        for name in names {
            precondition(MetricNaming.isValidLabelName(name), "\(metric): invalid label name \"\(name)\"")
            precondition(!reserved.contains(name), "\(metric): label name \"\(name)\" is reserved")
        }
        precondition(Set(names).count == names.count, "\(metric): duplicate label names in \(names)")
        self.names = names
        order = names.indices.sorted { names[$0] < names[$1] }
        sortedNames = order.map { names[$0] }
    }

    /// Checks that `values` has one value per label name.
    func check(_ values: [String]) {
        precondition(values.count == names.count,
                     "expected \(names.count) label values for \(names), got \(values.count): \(values)")
    }

    func labels(_ values: [String]) -> Labels {
        Labels(validatedSortedNames: sortedNames, values: order.map { values[$0] })
    }
}
