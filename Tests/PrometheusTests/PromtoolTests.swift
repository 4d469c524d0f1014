import Testing
@testable import Prometheus

/// The real `promtool check metrics` accepts what the renderer writes, without lint problems.
@Suite struct PromtoolTests {
    @Test func registryWithProcessCollectorAndHistogramPassesPromtool() throws {
        let registry = GoldenTests.makeRegistry()
        registry.register(ProcessCollector())
        let latency = HistogramVec(name: "liveactivity_push_latency_seconds", help: "APNs request latency.",
                                   labelNames: ["event", "priority"],
                                   upperBounds: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])
        latency.observe(["update", "10"], value: 0.04)
        latency.observe(["end", "5"], value: 0.3)
        registry.register(latency)
        let text = registry.render()
        #expect(text.contains("process_resident_memory_bytes "))
        #expect(text.contains(#"liveactivity_push_latency_seconds_bucket{event="end",priority="5",le="+Inf"} 1"#))

        let result = try Promtool.checkMetrics(text)
        #expect(result.status == 0, "promtool said: \(result.output)")
        #expect(result.output.isEmpty, "promtool said: \(result.output)")
    }

    @Test func promtoolRejectsBrokenText() throws {
        // Proves the check above can fail: promtool really parses its input.
        let result = try Promtool.checkMetrics("# TYPE broken counter\nbroken{a=\"1} 1\n")
        // 1, not just "not 0": a missing promtool (`Promtool.notInstalled`) must fail here too.
        #expect(result.status == 1, "promtool said: \(result.output)")
    }
}
