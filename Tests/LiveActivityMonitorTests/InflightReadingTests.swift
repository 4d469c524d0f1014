import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// The parsed contents an ingest's events carry until they are stored (`ContentReading`) hold
/// the in-flight budget (`--max-inflight-bytes`) beside the body, which counts only its bytes.
@Suite struct InflightReadingTests {
    /// A budget that grants up to `limit` bytes and records what it was asked.
    final class Budget: InflightBudget {
        let limit: Int
        let asked = Locked<[Int]>([])
        init(limit: Int) { self.limit = limit }
        func hold(_ bytes: Int) -> Bool {
            asked.withLock { $0.append(bytes) }
            return bytes <= limit
        }
        /// Never asked here: an ingest's answer is small.
        func holdAnswer(_ bytes: Int) -> AnswerHold? { nil }
    }

    static var content: [String: Any] { ["driverName": "Ana", "rating": "4.9", "progress": 0.25, "duration": 12] }

    static func batch() -> [UInt8] {
        (0..<3).map { Scenario.push("a1", "p\($0)", at: TestServer.base - 60 + Double($0), content: content).jsonString }
            .joined(separator: "\n").utf8.map { $0 }
    }

    static func post(_ monitor: InProcessMonitor, budget: Budget) -> HTTPResponse {
        var request = InProcessMonitor.request("POST", "/v1/events", headers: [("Content-Type", "application/x-ndjson")],
                                               body: batch())
        request.inflightBudget = budget
        return monitor.monitor.handle(request)
    }

    @Test func theEventsReadingsAreHeldBeforeTheyAreStored() throws {
        try withInProcessMonitor { monitor in
            let budget = Budget(limit: .max)
            #expect(Self.post(monitor, budget: budget).status == 200)
            let reading = ContentReading(JSONText(JSONValue(Self.content)))
            #expect(reading.heapBytes > 0)
            #expect(budget.asked.value == [3 * reading.heapBytes])
        }
    }

    @Test func aBudgetSpentByTheReadingsSheds503AndStoresNothing() throws {
        try withInProcessMonitor { monitor in
            let budget = Budget(limit: 0)
            let response = Self.post(monitor, budget: budget)
            #expect(response.status == 503)
            #expect(response.headers.contains { $0 == (name: "Retry-After", value: "1") })
            #expect(budget.asked.value.count == 1)
            let text = String(decoding: monitor.handle("GET", "/metrics").body, as: UTF8.self)
            #expect(MetricsText.value(of: "liveactivity_ingest_events_total{type=\"push.sent\"}", in: text) == 0)
            #expect(MetricsText.value(of: "liveactivity_ingest_rejected_total{reason=\"unavailable\"}", in: text) == 1)
        }
    }

    /// Every level counts: an object's members, an array's elements, strings past 15 bytes.
    @Test func aReadingCountsWhatItsValueHolds() throws {
        func bytes(_ text: String) throws -> Int { ContentReading.heapBytes(of: try JSONParser.parse(text)) }
        #expect(try bytes("1") == 0)
        #expect(try bytes("{}") == 0)
        #expect(try bytes(#"{"a":1}"#) > 0)
        #expect(try bytes(#"{"a":1,"b":2}"#) > bytes(#"{"a":1}"#))
        #expect(try bytes(#"{"a":"a string of more than fifteen bytes"}"#) > bytes(#"{"a":"short"}"#))
        #expect(try bytes(#"{"a":[1,2,3]}"#) > bytes(#"{"a":1}"#))
        #expect(try bytes(#"{"a":{"b":1}}"#) > bytes(#"{"a":1}"#))
    }
}
