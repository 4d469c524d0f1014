/// The Prometheus text exposition format, version 0.0.4.
///
/// Output is deterministic, as client_golang's `NormalizeMetricFamilies` makes it: families
/// sorted by name, samples by labels, histogram buckets in bound order. That is what lets a
/// golden test pin the whole `/metrics` text.
public enum TextFormat {
    /// The `Content-Type` of ``render(_:)``'s output.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Families sorted by name, samples by labels; histogram buckets cumulative with `le` in
    /// numeric order and +Inf last, then _sum, _count. HELP/TYPE on every family. A family with
    /// no samples still prints HELP and TYPE.
    ///
    /// Preconditions (programming errors, since families come from code): names valid, family
    /// names distinct. Samples may come from stored data, so none can stop the process: a
    /// sample that cannot be written is left out — a label set already written in its family,
    /// a value of another kind than the family's type, a histogram with an `le` label or with
    /// bucket counts that do not match its bounds. A collector that builds samples from
    /// stored values counts what it cannot render itself (``unrenderable(_:)`` tells it).
    public static func render(_ families: [MetricFamily]) -> String {
        let sorted = families.sorted { $0.name < $1.name }
        var output = ""
        for (index, family) in sorted.enumerated() {
            precondition(index == 0 || sorted[index - 1].name != family.name,
                         "two metric families named \"\(family.name)\"")
            render(family, into: &output)
        }
        return output
    }

    /// A sample value: integral values below 1e15 in magnitude without a fraction ("3", "-2"),
    /// others in Swift's shortest round-trip form ("0.25", "1e-05"), and "+Inf", "-Inf", "NaN".
    public static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        // 1e15 < 2^53, so every integral value below it converts to Int64 exactly.
        if abs(value) < 1e15, value.rounded(.towardZero) == value {
            return String(Int64(value))
        }
        return value.description
    }

    /// Escapes `\`, `"` and line feed, as a label value inside double quotes requires.
    static func escapeLabelValue(_ value: String) -> String {
        escape(value, quote: true)
    }

    /// Escapes `\` and line feed, as `# HELP` text requires.
    static func escapeHelp(_ help: String) -> String {
        escape(help, quote: false)
    }

    private static func escape(_ text: String, quote: Bool) -> String {
        let needsEscaping = text.utf8.contains { byte in
            byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\n") || (quote && byte == UInt8(ascii: "\""))
        }
        guard needsEscaping else { return text }
        var escaped = String.UnicodeScalarView()
        // Unicode scalars, not Characters: "\r\n" is one Character and would hide its "\n".
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped.append(contentsOf: #"\\"#.unicodeScalars)
            case "\n": escaped.append(contentsOf: #"\n"#.unicodeScalars)
            case "\"" where quote: escaped.append(contentsOf: #"\""#.unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    private static func render(_ family: MetricFamily, into output: inout String) {
        let name = family.name
        precondition(MetricNaming.isValidMetricName(name), "invalid metric name \"\(name)\"")
        output += "# HELP \(name) \(escapeHelp(family.help))\n"
        output += "# TYPE \(name) \(family.type.rawValue)\n"
        let samples = family.samples.sorted { $0.labels < $1.labels }
        var written: Labels?
        for sample in samples where isRenderable(sample, in: family) && sample.labels != written {
            written = sample.labels
            switch sample.value {
            case .number(let value):
                output += "\(name)\(labelText(sample.labels)) \(format(value))\n"
            case .histogram(let histogram):
                renderHistogram(name: name, labels: sample.labels, histogram: histogram, into: &output)
            }
        }
    }

    /// How many of `family`'s samples ``render(_:)`` leaves out (see there).
    public static func unrenderable(_ family: MetricFamily) -> Int {
        var seen = Set<Labels>()
        return family.samples.count { !isRenderable($0, in: family) || !seen.insert($0.labels).inserted }
    }

    private static func isRenderable(_ sample: Sample, in family: MetricFamily) -> Bool {
        switch (family.type, sample.value) {
        case (.counter, .number), (.gauge, .number), (.untyped, .number):
            return true
        case (.histogram, .histogram(let histogram)):
            return sample.labels["le"] == nil && histogram.bucketCounts.count == histogram.upperBounds.count + 1
        default:
            return false
        }
    }

    private static func renderHistogram(name: String, labels: Labels, histogram: HistogramValue,
                                        into output: inout String) {
        let cumulative = histogram.cumulativeCounts
        for (index, total) in cumulative.enumerated() {
            let bound = index < histogram.upperBounds.count ? format(histogram.upperBounds[index]) : "+Inf"
            output += "\(name)_bucket\(labelText(labels, le: bound)) \(total)\n"
        }
        let suffixLabels = labelText(labels)
        output += "\(name)_sum\(suffixLabels) \(format(histogram.sum))\n"
        output += "\(name)_count\(suffixLabels) \(cumulative.last ?? 0)\n"
    }

    /// `{a="x",b="y"}` in label-name order, with `le` last as client_golang writes it;
    /// nothing for an empty set.
    private static func labelText(_ labels: Labels, le: String? = nil) -> String {
        var parts = zip(labels.names, labels.values).map { "\($0)=\"\(escapeLabelValue($1))\"" }
        if let le { parts.append("le=\"\(le)\"") }
        return parts.isEmpty ? "" : "{" + parts.joined(separator: ",") + "}"
    }
}
