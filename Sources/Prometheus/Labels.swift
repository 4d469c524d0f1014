/// A label set, kept sorted by label name; compared label by label for output order.
///
/// Label names are checked against the Prometheus rules (a precondition: names come from code);
/// values may be any string and are escaped by ``TextFormat``.
public struct Labels: Sendable, Hashable, Comparable, ExpressibleByDictionaryLiteral {
    /// Label names, strictly increasing.
    public private(set) var names: [String]
    /// Label values, parallel to ``names``.
    public private(set) var values: [String]

    /// The empty label set.
    public init() {
        names = []
        values = []
    }

    /// A label set from name/value pairs in any order. Names must be valid and distinct.
    public init(_ pairs: [(String, String)]) {
        let sorted = pairs.sorted { $0.0 < $1.0 }
        for (index, pair) in sorted.enumerated() {
            precondition(MetricNaming.isValidLabelName(pair.0), "invalid label name \"\(pair.0)\"")
            precondition(index == 0 || sorted[index - 1].0 != pair.0, "duplicate label name \"\(pair.0)\"")
        }
        names = sorted.map(\.0)
        values = sorted.map(\.1)
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The pairs in label-name order. Setting re-sorts and re-validates.
    public var pairs: [(name: String, value: String)] {
        get { zip(names, values).map { (name: $0, value: $1) } }
        set { self = Labels(newValue.map { ($0.name, $0.value) }) }
    }

    /// The number of labels.
    public var count: Int { names.count }

    /// Whether there are no labels.
    public var isEmpty: Bool { names.isEmpty }

    /// The value of the label `name`, if present.
    public subscript(name: String) -> String? {
        names.firstIndex(of: name).map { values[$0] }
    }

    /// Equal when every name and value has the same bytes (``ExactText``).
    public static func == (lhs: Labels, rhs: Labels) -> Bool {
        lhs.names == rhs.names && ExactText.equal(lhs.values, rhs.values)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(names)
        for value in values { ExactText.hash(value, into: &hasher) }
    }

    /// Compares label by label in label-name order: first the name, then the value.
    /// Values of `le` and `quantile` compare numerically when both parse as numbers,
    /// so `le="10"` sorts after `le="2.5"`; other values compare as strings.
    public static func < (lhs: Labels, rhs: Labels) -> Bool {
        for index in 0..<min(lhs.count, rhs.count) {
            let (lhsName, rhsName) = (lhs.names[index], rhs.names[index])
            if lhsName != rhsName { return lhsName < rhsName }
            let (lhsValue, rhsValue) = (lhs.values[index], rhs.values[index])
            if ExactText.equal(lhsValue, rhsValue) { continue }
            if lhsName == "le" || lhsName == "quantile",
               let lhsNumber = Double(lhsValue), let rhsNumber = Double(rhsValue),
               lhsNumber != rhsNumber {
                return lhsNumber < rhsNumber
            }
            return ExactText.precedes(lhsValue, rhsValue)
        }
        return lhs.count < rhs.count
    }
}

extension Labels {
    /// Labels from names already validated and sorted (see `LabelSchema`), skipping the checks
    /// that would otherwise run for every series at every scrape.
    init(validatedSortedNames names: [String], values: [String]) {
        self.names = names
        self.values = values
    }
}
