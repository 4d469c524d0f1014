/// One series of a family: the label values in the order of the family's label names.
public struct SeriesKey: Hashable, Sendable {
    public var family: String
    public var labelValues: [String]

    public init(_ family: String, _ labelValues: [String]) {
        self.family = family
        self.labelValues = labelValues
    }

    /// A stable text form for the `counters` table: family and values joined by U+001F, which
    /// no label value we emit can contain (values come from closed sets).
    public var storageKey: String {
        ([family] + labelValues).joined(separator: "\u{1F}")
    }

    public init?(storageKey: String) {
        let parts = storageKey.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        guard let family = parts.first else { return nil }
        self.init(family, Array(parts.dropFirst()))
    }
}
