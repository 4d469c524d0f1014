import Testing
@testable import Prometheus

@Suite struct SortingTests {
    /// `ExactText.precedes` (memcmp in place) orders as the UTF-8 views do, prefixes, bytes above
    /// 127, empty and bridged-looking strings included.
    @Test func exactTextOrderIsUTF8ByteOrder() {
        let words = ["", "a", "ab", "abc", "b", "é", "e\u{301}", "z", "Z", "😀", "ü", "a\u{0}", "\u{7f}", "\u{80}",
                     String(repeating: "x", count: 40), String(repeating: "x", count: 40) + "y", "Gare du Nord", "Châtelet"]
        for a in words {
            for b in words {
                #expect(ExactText.precedes(a, b) == a.utf8.lexicographicallyPrecedes(b.utf8), "\(a) \(b)")
            }
        }
    }

    @Test func familiesSortByNameRegardlessOfInsertionOrder() {
        let names = ["zeta", "alpha", "mu", "alpha_total", "a"]
        let text = TextFormat.render(names.map { MetricFamily(name: $0, help: "h", type: .gauge) })
        let typeLines = ExpositionParsing.lines(text).filter { $0.hasPrefix("# TYPE ") }
        #expect(typeLines == ["# TYPE a gauge", "# TYPE alpha gauge", "# TYPE alpha_total gauge",
                              "# TYPE mu gauge", "# TYPE zeta gauge"])
    }

    @Test func samplesSortByLabelValuesInLabelNameOrder() {
        let samples = [
            Sample(labels: ["b": "1", "a": "y"], value: 4),
            Sample(labels: ["a": "x", "b": "2"], value: 2),
            Sample(labels: ["b": "1", "a": "x"], value: 1),
            Sample(labels: ["a": "y", "b": "0"], value: 3),
        ]
        // Every insertion order gives the same text.
        var outputs = Set<String>()
        for rotation in 0..<samples.count {
            let rotated = Array(samples[rotation...] + samples[..<rotation])
            outputs.insert(TextFormat.render([MetricFamily(name: "m", help: "h", type: .gauge, samples: rotated)]))
            outputs.insert(TextFormat.render([MetricFamily(name: "m", help: "h", type: .gauge,
                                                           samples: rotated.reversed())]))
        }
        #expect(outputs.count == 1)
        #expect(ExpositionParsing.sampleLines(outputs.first ?? "") == [
            #"m{a="x",b="1"} 1"#, #"m{a="x",b="2"} 2"#, #"m{a="y",b="0"} 3"#, #"m{a="y",b="1"} 4"#,
        ])
    }

    @Test func unlabelledSampleSortsFirst() {
        let family = MetricFamily(name: "m", help: "h", type: .untyped,
                                  samples: [Sample(labels: ["a": ""], value: 1), Sample(value: 0)])
        #expect(ExpositionParsing.sampleLines(TextFormat.render([family])) == ["m 0", #"m{a=""} 1"#])
    }

    @Test func histogramBucketsAreInNumericOrder() {
        var histogram = HistogramValue(upperBounds: [0.5, 2.5, 10, 100])
        histogram.observe(50)
        let text = TextFormat.render([MetricFamily(name: "h", help: "h", type: .histogram,
                                                   samples: [Sample(histogram: histogram)])])
        let les = ExpositionParsing.sampleLines(text).compactMap { line -> Substring? in
            guard let range = line.range(of: #"le=""#) else { return nil }
            return line[range.upperBound...].prefix { $0 != "\"" }
        }
        // Lexical order would be 0.5, 10, 100, 2.5.
        #expect(les == ["0.5", "2.5", "10", "100", "+Inf"])
    }

    @Test func leLabelsCompareNumerically() {
        let two: Labels = ["le": "2.5"]
        let ten: Labels = ["le": "10"]
        let infinity: Labels = ["le": "+Inf"]
        #expect(two < ten)
        #expect(ten < infinity)
        #expect(!(ten < two))
        // Outside le and quantile, values compare as strings.
        #expect((["x": "10"] as Labels) < (["x": "2.5"] as Labels))
    }

    @Test func labelsCompareLabelByLabel() {
        #expect((["a": "1", "b": "z"] as Labels) < (["a": "2", "b": "a"] as Labels))
        #expect((["a": "1"] as Labels) < (["a": "1", "b": ""] as Labels))
        #expect((["a": "z"] as Labels) < (["b": "a"] as Labels))
        #expect(!((["a": "1"] as Labels) < (["a": "1"] as Labels)))
    }

    @Test func labelsAreKeptSortedByName() {
        let labels = Labels([("zone", "eu"), ("app", "timer"), ("mode", "x")])
        #expect(labels.pairs.map(\.name) == ["app", "mode", "zone"])
        #expect(labels.pairs.map(\.value) == ["timer", "x", "eu"])
        #expect(labels["zone"] == "eu")
        #expect(labels["missing"] == nil)
        #expect(labels == ["mode": "x", "zone": "eu", "app": "timer"])
    }

    @Test func namesAreValidatedAgainstThePrometheusRules() {
        #expect(MetricNaming.isValidMetricName("liveactivity_push_latency_seconds"))
        #expect(MetricNaming.isValidMetricName("job:rate5m"))
        #expect(MetricNaming.isValidMetricName("_x9"))
        #expect(!MetricNaming.isValidMetricName(""))
        #expect(!MetricNaming.isValidMetricName("9lives"))
        #expect(!MetricNaming.isValidMetricName("push-latency"))
        #expect(!MetricNaming.isValidMetricName("caf\u{E9}"))
        #expect(MetricNaming.isValidLabelName("attributes_type"))
        #expect(!MetricNaming.isValidLabelName("a:b"))
        #expect(!MetricNaming.isValidLabelName("__name__"))
        #expect(!MetricNaming.isValidLabelName("1a"))
    }

    @Test func duplicateFamilyNamesStopTheProcess() async {
        await #expect(processExitsWith: .failure) {
            let registry = Registry()
            registry.register { [MetricFamily(name: "twice", help: "h", type: .gauge)] }
            registry.register { [MetricFamily(name: "twice", help: "h", type: .gauge)] }
            _ = registry.render()
        }
    }
}
