import Testing
@testable import Prometheus

/// Samples may come from stored data: one that cannot be written is left out, never fatal.
@Suite struct UnrenderableSampleTests {
    @Test func duplicateLabelSetsKeepTheFirstInOrderAndAreCounted() {
        let family = MetricFamily(name: "m", help: "h", type: .counter, samples: [
            Sample(labels: ["a": "x"], value: 1), Sample(labels: ["a": "x"], value: 2), Sample(labels: ["a": "y"], value: 3),
        ])
        let lines = ExpositionParsing.sampleLines(TextFormat.render([family]))
        #expect(lines.count == 2)
        #expect(lines.last == #"m{a="y"} 3"#)
        #expect(TextFormat.unrenderable(family) == 1)
    }

    @Test func valuesOfAnotherKindAndBrokenHistogramsAreLeftOut() {
        var broken = HistogramValue(upperBounds: [1, 2])
        broken.bucketCounts = [1]
        let histograms = MetricFamily(name: "h", help: "h", type: .histogram, samples: [
            Sample(labels: ["a": "number"], value: 1),
            Sample(labels: ["a": "broken"], value: .histogram(broken)),
            Sample(labels: ["le": "1"], value: .histogram(HistogramValue(upperBounds: [1]))),
            Sample(labels: ["a": "fine"], value: .histogram(HistogramValue(upperBounds: [1]))),
        ])
        let counter = MetricFamily(name: "c", help: "h", type: .counter,
                                   samples: [Sample(value: .histogram(HistogramValue(upperBounds: [1])))])
        let text = TextFormat.render([histograms, counter])
        #expect(ExpositionParsing.sampleLines(text) == [
            #"h_bucket{a="fine",le="1"} 0"#, #"h_bucket{a="fine",le="+Inf"} 0"#, #"h_sum{a="fine"} 0"#, #"h_count{a="fine"} 0"#,
        ])
        #expect(TextFormat.unrenderable(histograms) == 3)
        #expect(TextFormat.unrenderable(counter) == 1)
        #expect(text.contains("# TYPE c counter"))
    }
}
