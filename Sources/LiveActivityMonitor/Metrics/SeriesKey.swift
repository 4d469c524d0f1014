import JSON
import Prometheus

/// One series of a family: the label values in the order of the family's label names.
public struct SeriesKey: Hashable, Sendable {
    public var family: String
    public var labelValues: [String]

    public init(_ family: String, _ labelValues: [String]) {
        self.family = family
        self.labelValues = labelValues
    }

    /// Equal when the bytes are (``ExactText``): equivalent spellings of a type are two series.
    public static func == (a: SeriesKey, b: SeriesKey) -> Bool {
        a.family == b.family && ExactText.equal(a.labelValues, b.labelValues)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(family)
        for value in labelValues { ExactText.hash(value, into: &hasher) }
    }

    /// The key's form in the `counters` table: a JSON array of the family and its label values.
    /// JSON escapes every character, so any value reads back whole: a label value is free text
    /// (an app's attributes type), and a separator it could contain would split it.
    public var storageKey: String {
        var w = JSONWriter(capacity: 64)
        w.beginArray()
        w.string(family)
        for value in labelValues { w.string(value) }
        w.endArray()
        return w.string
    }

    /// A key from its stored form; nil for text that is not a non-empty JSON array of strings.
    public init?(storageKey: String) {
        guard case .array(let items) = try? JSONParser.parse(storageKey) else { return nil }
        var strings: [String] = []
        for item in items {
            guard case .string(let s) = item else { return nil }
            strings.append(s)
        }
        guard let family = strings.first else { return nil }
        self.init(family, Array(strings.dropFirst()))
    }

    /// The key of a `counters` row as start-up reads it: a text that is no key (a damaged row)
    /// is kept under no family, so that the exposition leaves it out and counts it.
    public static func stored(_ text: String) -> SeriesKey {
        SeriesKey(storageKey: text) ?? SeriesKey("", [text])
    }
}
