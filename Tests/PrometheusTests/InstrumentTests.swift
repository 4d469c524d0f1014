import Foundation
import Testing
@testable import Prometheus

@Suite struct InstrumentTests {
    /// 8 threads × 10,000 increments. Swift 6.3's `Mutex` on Linux is a priority-inheritance
    /// futex, slow under contention (swiftlang/swift#88440), so each thread does only that.
    @Test func counterVecIsExactUnderContention() {
        let counter = CounterVec(name: "hits_total", help: "h", labelNames: ["thread", "kind"])
        let threads = 8
        let increments = 10_000
        let start = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        for index in 0..<threads {
            // Two threads per series, four series: contention on the lock and on each entry.
            let labels = ["t\(index % 4)", "shared"]
            let thread = Thread {
                start.wait()
                for _ in 0..<increments {
                    counter.inc(labels)
                }
                done.signal()
            }
            thread.start()
        }
        for _ in 0..<threads { start.signal() }
        for _ in 0..<threads { done.wait() }
        let values = (0..<4).map { counter.value(["t\($0)", "shared"]) }
        #expect(values == Array(repeating: Double(2 * increments), count: 4))
        #expect(counter.family().samples.count == 4)
    }

    @Test func histogramVecObservesWhileTheRegistryRenders() {
        let histogram = HistogramVec(name: "lat_seconds", help: "h", labelNames: ["event"], upperBounds: [1])
        let registry = Registry()
        registry.register(histogram)
        let threads = 4
        let observations = 2_000
        let done = DispatchSemaphore(value: 0)
        for index in 0..<threads {
            let labels = [index.isMultiple(of: 2) ? "update" : "end"]
            Thread {
                for step in 0..<observations { histogram.observe(labels, value: Double(step % 3)) }
                done.signal()
            }.start()
        }
        for _ in 0..<20 { _ = registry.render() }
        for _ in 0..<threads { done.wait() }
        #expect(histogram.value(["update"])?.count == UInt64(2 * observations))
        #expect(histogram.value(["end"])?.bucketCounts.reduce(0, +) == UInt64(2 * observations))
        #expect(registry.render().contains(#"lat_seconds_count{event="end"} 4000"#))
    }

    @Test func counterStartsAtZeroAndCounts() {
        let counter = Counter(name: "events_total", help: "Events.")
        #expect(counter.value == 0)
        counter.inc()
        counter.inc(by: 2.5)
        #expect(counter.value == 3.5)
        #expect(TextFormat.render([counter.family()]) == "# HELP events_total Events.\n# TYPE events_total counter\nevents_total 3.5\n")
    }

    @Test func counterVecInitializeExportsKnownSeriesAtZero() {
        let counter = CounterVec(name: "ended_total", help: "h", labelNames: ["by"])
        for by in ["app", "push", "system"] { counter.initialize([by]) }
        counter.inc(["push"])
        counter.initialize(["push"])  // does not reset
        #expect(ExpositionParsing.sampleLines(TextFormat.render([counter.family()])) == [
            #"ended_total{by="app"} 0"#, #"ended_total{by="push"} 1"#, #"ended_total{by="system"} 0"#,
        ])
    }

    @Test func gaugeAndGaugeVecSetIncDec() {
        let gauge = Gauge(name: "size_bytes", help: "h")
        gauge.set(10)
        gauge.inc(by: 5)
        gauge.dec()
        #expect(gauge.value == 14)

        let vec = GaugeVec(name: "activities", help: "h", labelNames: ["state", "attributes_type"])
        vec.set(["active", "Timer"], to: 3)
        vec.inc(["stale", "Timer"])
        vec.dec(["active", "Timer"], by: 2)
        vec.set(["ended", "Ride"], to: 7)
        vec.remove(["ended", "Ride"])
        #expect(vec.value(["active", "Timer"]) == 1)
        #expect(vec.value(["ended", "Ride"]) == nil)
        #expect(ExpositionParsing.sampleLines(TextFormat.render([vec.family()])) == [
            #"activities{attributes_type="Timer",state="active"} 1"#,
            #"activities{attributes_type="Timer",state="stale"} 1"#,
        ])
    }

    @Test func histogramWithoutLabels() {
        let histogram = Histogram(name: "commit_seconds", help: "h", upperBounds: [0.01, 0.1])
        histogram.observe(0.05)
        #expect(histogram.value.bucketCounts == [0, 1, 0])
        #expect(ExpositionParsing.sampleLines(TextFormat.render([histogram.family()])).last == "commit_seconds_count 1")
    }

    @Test func wrongNumberOfLabelValuesStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            CounterVec(name: "x_total", help: "h", labelNames: ["a", "b"]).inc(["only one"])
        }
    }
}
