import Testing
@testable import Prometheus

@Suite struct FormattingTests {
    @Test(arguments: [
        (3, "3"),
        (0, "0"),
        (-0.0, "0"),
        (-2, "-2"),
        (1, "1"),
        (0.25, "0.25"),
        (-2.5, "-2.5"),
        (0.005, "0.005"),
        (1e-05, "1e-05"),
        (0.1 + 0.2, "0.30000000000000004"),
        (999_999_999_999_999, "999999999999999"),
        (-999_999_999_999_999, "-999999999999999"),
        (1e15, "1000000000000000.0"),
        (1e16, "1e+16"),
        (123_456_789_012_345.5, "123456789012345.5"),
        (Double.greatestFiniteMagnitude, "1.7976931348623157e+308"),
        (Double.infinity, "+Inf"),
        (-Double.infinity, "-Inf"),
        (Double.nan, "NaN"),
    ] as [(Double, String)])
    func valueFormatting(value: Double, text: String) {
        #expect(TextFormat.format(value) == text)
    }

    @Test func everyFormattedValueParsesBackToItself() {
        for value in [0.1, 1e-300, Double.leastNonzeroMagnitude, 123.456, 1e15, 2.0.squareRoot(), -7e22] {
            #expect(Double(TextFormat.format(value)) == value)
        }
    }

    @Test func bucketBoundsUseTheSameFormat() {
        let histogram = HistogramValue(upperBounds: [1e-05, 0.005, 1, 2.5])
        let text = TextFormat.render([MetricFamily(name: "h", help: "h", type: .histogram,
                                                   samples: [Sample(histogram: histogram)])])
        #expect(ExpositionParsing.sampleLines(text).prefix(5) == [
            #"h_bucket{le="1e-05"} 0"#, #"h_bucket{le="0.005"} 0"#, #"h_bucket{le="1"} 0"#,
            #"h_bucket{le="2.5"} 0"#, #"h_bucket{le="+Inf"} 0"#,
        ])
    }
}
