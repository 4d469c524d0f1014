import Testing
@testable import Prometheus

@Suite struct EscapingTests {
    /// A value crafted to close the label set and start a sample line of its own.
    static let forgery = "x\"} 1\nforged_metric{evil=\"1\"} 666\n\\"

    @Test func labelValueCannotForgeASampleLine() throws {
        let family = MetricFamily(name: "victim_total", help: "h", type: .counter, samples: [
            Sample(labels: ["value": Self.forgery], value: 1),
            Sample(labels: ["value": "crlf\r\nforged_metric 666"], value: 2),
            Sample(labels: ["value": "plain"], value: 3),
        ])
        let text = TextFormat.render([family])
        let lines = ExpositionParsing.sampleLines(text)
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.hasPrefix("victim_total{value=\"") })
        #expect(!ExpositionParsing.lines(text).contains { $0.hasPrefix("forged_metric") })
        #expect(lines.contains(#"victim_total{value="x\"} 1\nforged_metric{evil=\"1\"} 666\n\\"} 1"#))

        // The escaped values read back to the originals.
        let values = lines.map { line in
            ExpositionParsing.unescapeLabelValue(line.dropFirst(#"victim_total{value=""#.count).dropLast(#""} 1"#.count))
        }
        #expect(Set(values) == [Self.forgery, "crlf\r\nforged_metric 666", "plain"])

        let result = try Promtool.checkMetrics(text)
        #expect(result.status == 0, "promtool: \(result.output)")
    }

    @Test func histogramLabelValueCannotForgeASampleLine() {
        var histogram = HistogramValue(upperBounds: [1])
        histogram.observe(0.5)
        let text = TextFormat.render([MetricFamily(name: "h", help: "h", type: .histogram,
                                                   samples: [Sample(labels: ["v": Self.forgery], histogram: histogram)])])
        // Two buckets, _sum and _count.
        #expect(ExpositionParsing.sampleLines(text).count == 4)
    }

    @Test func helpCannotForgeALine() {
        let text = TextFormat.render([MetricFamily(name: "m", help: "first\nm 666\r\n# TYPE m counter \\", type: .gauge)])
        #expect(text == "# HELP m first\\nm 666\r\\n# TYPE m counter \\\\\n# TYPE m gauge\n")
        #expect(ExpositionParsing.sampleLines(text).isEmpty)
    }

    @Test(arguments: [
        ("plain", "plain"),
        ("a\"b", #"a\"b"#),
        ("a\\b", #"a\\b"#),
        ("a\nb", #"a\nb"#),
        ("\\n", #"\\n"#),
        ("caf\u{E9} \u{1F600}", "caf\u{E9} \u{1F600}"),
    ])
    func labelValueEscaping(raw: String, escaped: String) {
        #expect(TextFormat.escapeLabelValue(raw) == escaped)
    }

    @Test func helpEscapesBackslashAndNewlineButNotQuotes() {
        #expect(TextFormat.escapeHelp("say \"hi\"\\\n") == #"say "hi"\\\n"#)
    }
}
