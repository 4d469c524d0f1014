import Testing
@testable import Prometheus

@Suite struct HistogramTests {
    @Test func observeCountsInTheFirstBucketWhoseBoundIsAtLeastTheValue() {
        var histogram = HistogramValue(upperBounds: [1, 2, 5])
        for value in [-3, 0.5, 1, 1.0000001, 2, 5, 5.5, 1e9] {
            histogram.observe(value)
        }
        #expect(histogram.bucketCounts == [3, 2, 1, 2])
        #expect(histogram.count == 8)
        #expect(histogram.sum == -3 + 0.5 + 1 + 1.0000001 + 2 + 5 + 5.5 + 1e9)
        #expect(histogram.cumulativeCounts == [3, 5, 6, 8])
    }

    @Test func newHistogramIsEmpty() {
        let histogram = HistogramValue(upperBounds: [0.1, 1])
        #expect(histogram.bucketCounts == [0, 0, 0])
        #expect(histogram.count == 0)
        #expect(histogram.sum == 0)
    }

    @Test func noBoundsMeansOnlyTheInfBucket() {
        var histogram = HistogramValue(upperBounds: [])
        histogram.observe(42)
        #expect(histogram.bucketCounts == [1])
        let text = TextFormat.render([MetricFamily(name: "h", help: "h", type: .histogram,
                                                   samples: [Sample(histogram: histogram)])])
        #expect(ExpositionParsing.sampleLines(text) == [#"h_bucket{le="+Inf"} 1"#, "h_sum 42", "h_count 1"])
    }

    @Test func nanGoesToTheOverflowBucket() {
        var histogram = HistogramValue(upperBounds: [1])
        histogram.observe(.nan)
        #expect(histogram.bucketCounts == [0, 1])
        #expect(histogram.sum.isNaN)
    }

    @Test func mergeAddsCountsAndSums() {
        var first = HistogramValue(upperBounds: [1, 10])
        first.observe(0.5)
        first.observe(20)
        var second = HistogramValue(upperBounds: [1, 10])
        second.observe(5)
        second.observe(5)
        second.observe(0.25)
        first.merge(second)
        #expect(first.bucketCounts == [2, 2, 1])
        #expect(first.count == 5)
        #expect(first.sum == 30.75)
        // Merging is the same as observing everything in one histogram.
        var single = HistogramValue(upperBounds: [1, 10])
        for value in [0.5, 20, 5, 5, 0.25] { single.observe(value) }
        #expect(first == single)
    }

    @Test func outputIsCumulativeThenSumThenCount() {
        var histogram = HistogramValue(upperBounds: [0.1, 1, 10])
        for value in [0.05, 0.5, 0.5, 5, 50] { histogram.observe(value) }
        let family = MetricFamily(name: "lat_seconds", help: "h", type: .histogram,
                                  samples: [Sample(labels: ["event": "update"], histogram: histogram)])
        #expect(ExpositionParsing.sampleLines(TextFormat.render([family])) == [
            #"lat_seconds_bucket{event="update",le="0.1"} 1"#,
            #"lat_seconds_bucket{event="update",le="1"} 3"#,
            #"lat_seconds_bucket{event="update",le="10"} 4"#,
            #"lat_seconds_bucket{event="update",le="+Inf"} 5"#,
            #"lat_seconds_sum{event="update"} 56.05"#,
            #"lat_seconds_count{event="update"} 5"#,
        ])
    }

    @Test func histogramVecKeepsOneSeriesPerLabelValues() throws {
        let vec = HistogramVec(name: "payload_bytes", help: "h", labelNames: ["event"], upperBounds: [256, 4096])
        vec.initialize(["end"])
        vec.observe(["update"], value: 300)
        vec.observe(["update"], value: 100)
        let update = try #require(vec.value(["update"]))
        #expect(update.bucketCounts == [1, 1, 0])
        #expect(vec.value(["end"])?.count == 0)
        #expect(vec.value(["start"]) == nil)
        #expect(vec.family().samples.count == 2)
    }
}
