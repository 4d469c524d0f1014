import Dispatch
import Foundation
import Glibc
import HTTPServer
import Testing
@testable import LiveActivityMonitor

/// Issue #24, "Search without stopping the world": 16 concurrent `?q=` searches while events
/// are ingested and `/metrics` is scraped, over real HTTP, against a large live fleet. The
/// scrape's and a single-event ingest's p99 with the searches stay within 2 × their p99 without
/// them (medians over alternating rounds: the machine is shared).
///
/// 200,000 live activities (loaded in about 25 s in the debug build), five rounds of 5 s each
/// way; `LAM_SCALE_TESTS=1` runs seven rounds of 10 s. A scrape every 0.5 s, an ingest back to
/// back, 16 searchers back to back. Measured a second time only if the first is over 2 ×.
@Suite(.serialized) struct SearchUnderLoadTests {
    static let scale = ProcessInfo.processInfo.environment["LAM_SCALE_TESTS"] == "1"
    static let fleet = 200_000
    static let rounds = scale ? 7 : 5
    static let roundSeconds = scale ? 10.0 : 5.0
    static let scrapeInterval = 0.5
    static let searchers = 16

    static func activityID(_ i: Int) -> String { "ride-\(i)" }
    static func bookingID(_ i: Int) -> String { "BK-\(i / 2)" }

    static func started(_ i: Int, at: Double) -> String {
        """
        {"type":"activity.started","activity_id":"\(activityID(i))","booking_id":"\(bookingID(i))",\
        "attributes_type":"\(i % 2 == 0 ? "LiveActivityAttributes" : "TimerWidgetAttributes")",\
        "occurred_at":\(at),"content_state":{"step":\(i % 7)}}
        """
    }

    /// p99 of `samples` (seconds).
    static func p99(_ samples: [Double]) -> Double {
        guard !samples.isEmpty else { return .nan }
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
    }

    static func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

    /// One round: a scraping client and an ingesting client (one event a request, back to back)
    /// for `seconds`, with `searchers` clients searching meanwhile; their latencies.
    static func round(port: Int, seconds: Double, searchers: Int, serial: Int, fleet: Int)
        -> (scrape: [Double], ingest: [Double], searches: Int, shed: Int, failures: [String]) {
        let scrape = Locked<[Double]>([]), ingest = Locked<[Double]>([]), searches = Locked(0), shed = Locked(0)
        let failures = Locked<[String]>([])
        let stop = Locked(false)
        let group = DispatchGroup()
        func loop(niced: Bool = false, _ body: @escaping @Sendable (HTTPClient, Int) throws -> Void) {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                // The searchers stand for remote users: their own parsing must not take the
                // server's processors (SCHED_IDLE: this thread runs when the server's have had theirs).
                if niced {
                    var param = sched_param()
                    param.sched_priority = 0
                    _ = pthread_setschedparam(pthread_self(), 5 /* SCHED_IDLE */, &param)
                }
                let http = HTTPClient(port: port, timeoutSeconds: 60)
                defer { http.close() }
                var n = 0
                while !stop.value {
                    do { try body(http, n) } catch { failures.withLock { $0.append("\(error)") }; return }
                    n += 1
                }
            }
        }
        @Sendable func timed(_ into: Locked<[Double]>, _ body: () throws -> HTTPClient.Response) throws {
            let start = DispatchTime.now().uptimeNanoseconds
            let response = try body()
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            if response.status != 200 {
                failures.withLock { $0.append("\(response.status) \(response.text.prefix(200))") }
            }
            into.withLock { $0.append(elapsed) }
        }
        // A scrape every `scrapeInterval` (Prometheus scrapes every 10-15 s; back to back, at
        // 200,000 live activities a debug build's scrape would hold the state lock nearly always,
        // and every other waiter's latency would be that of the lock's hand-over, not the search's).
        loop { http, _ in
            let start = DispatchTime.now().uptimeNanoseconds
            try timed(scrape) { try http.request("GET", "/metrics") }
            let spent = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            if spent < scrapeInterval { Thread.sleep(forTimeInterval: scrapeInterval - spent) }
        }
        loop { http, n in
            let event = """
                {"type":"activity.updated","activity_id":"\(activityID((serial * 7919 + n * 104_729) % fleet))",\
                "occurred_at":\(TestServer.base - 30),"content_state":{"step":\(n)}}
                """
            try timed(ingest) {
                try http.request("POST", "/v1/events", headers: [("Content-Type", "application/json")], body: Array(event.utf8))
            }
        }
        for s in 0..<searchers {
            loop(niced: true) { http, n in
                let i = (s * 1_000_003 + n * 7_919) % fleet
                // Exact activity ids, exact booking ids (two activities each), and prefixes as typed
                // into the search box (ride-1234 matches 111 activities, bk-1234 22).
                let q = switch n % 4 {
                case 0: activityID(i)
                case 1: bookingID(i).lowercased()
                case 2: "ride-\(1000 + i % 9000)"
                default: "BK-\(1000 + i % 9000)"
                }
                let response = try http.request("GET", "/api/activities?limit=20&q=" + q)
                // 503 (with Retry-After) is the cap on concurrent lists shedding: counted, allowed.
                if response.status == 503, response.headers["retry-after"] != nil {
                    shed.withLock { $0 += 1 }
                } else if response.status != 200 {
                    failures.withLock { $0.append("search \(q): \(response.status) \(response.text.prefix(200))") }
                }
                searches.withLock { $0 += 1 }
            }
        }
        Thread.sleep(forTimeInterval: seconds)
        stop.withLock { $0 = true }
        group.wait()
        return (scrape.value, ingest.value, searches.value, shed.value, failures.value)
    }

    @Test func searchesDoNotHoldScrapesOrIngest() throws {
        try withTestServer { server in
            let fleet = Self.fleet
            let loadStart = DispatchTime.now().uptimeNanoseconds
            // NDJSON batches of 1,000 starts, from two clients.
            let loadFailures = Locked<[String]>([])
            let port = server.server.port
            DispatchQueue.concurrentPerform(iterations: 2) { client in
                let http = HTTPClient(port: port, timeoutSeconds: 120)
                defer { http.close() }
                for batch in stride(from: client * 1000, to: fleet, by: 2000) {
                    let body = (batch..<min(fleet, batch + 1000))
                        .map { Self.started($0, at: TestServer.base - 3600 + Double($0) / 1000) }.joined(separator: "\n")
                    do {
                        let r = try http.request("POST", "/v1/events", headers: [("Content-Type", "application/x-ndjson")],
                                                 body: Array(body.utf8))
                        if r.status != 200 { loadFailures.withLock { $0.append("\(r.status) \(r.text.prefix(200))") } }
                    } catch { loadFailures.withLock { $0.append("\(error)") } }
                }
            }
            try #require(loadFailures.value.isEmpty, "\(loadFailures.value.prefix(3))")
            let loadSeconds = Double(DispatchTime.now().uptimeNanoseconds - loadStart) / 1e9
            let live = try server.json("/api/activities?limit=1&q=ride-")
            #expect(live["counts"]?["active"]?.doubleValue == Double(fleet))
            // Exact and prefix through HTTP, any case.
            let one = try server.json("/api/activities?q=RIDE-\(fleet - 1)")
            #expect(one["activities"]?.arrayValue?.map { $0["activity_id"]?.stringValue } == [Self.activityID(fleet - 1)])
            let booking = try server.json("/api/activities?q=bk-\(fleet / 2 - 1)")
            #expect(booking["activities"]?.arrayValue?.count == 2)

            // A second measurement only if the first is over: the 2 cores are shared with other
            // work, and a neighbour's burst during the rounds with searchers reads as their cost.
            var scrapeRatio = Double.infinity, ingestRatio = Double.infinity, searchCount = 0
            for attempt in 1...2 where scrapeRatio > 2 || ingestRatio > 2 {
                var without: [(scrape: Double, ingest: Double)] = [], with: [(scrape: Double, ingest: Double)] = []
                searchCount = 0
                for r in 0..<Self.rounds {
                    for searching in [false, true] {
                        let out = Self.round(port: port, seconds: Self.roundSeconds, searchers: searching ? Self.searchers : 0,
                                             serial: 2 * r + (searching ? 1 : 0), fleet: fleet)
                        #expect(out.failures.isEmpty, "\(out.failures.prefix(3))")
                        let figures = (scrape: Self.p99(out.scrape), ingest: Self.p99(out.ingest))
                        print(String(format: "search under load, round %d %@: scrape p99 %.1f ms (%d), ingest p99 %.1f ms (%d), %d searches (%d shed)",
                                     r, searching ? "with 16 searchers" : "without", figures.scrape * 1000, out.scrape.count,
                                     figures.ingest * 1000, out.ingest.count, out.searches, out.shed))
                        if searching { with.append(figures); searchCount += out.searches } else { without.append(figures) }
                    }
                }
                scrapeRatio = Self.median(with.map(\.scrape)) / Self.median(without.map(\.scrape))
                ingestRatio = Self.median(with.map(\.ingest)) / Self.median(without.map(\.ingest))
                print(String(format: "search under load (measurement %d): %d live activities (loaded in %.1f s); median p99 scrape "
                             + "%.1f → %.1f ms (×%.2f), ingest %.1f → %.1f ms (×%.2f), %d searches", attempt, fleet, loadSeconds,
                             Self.median(without.map(\.scrape)) * 1000, Self.median(with.map(\.scrape)) * 1000, scrapeRatio,
                             Self.median(without.map(\.ingest)) * 1000, Self.median(with.map(\.ingest)) * 1000, ingestRatio,
                             searchCount))
            }
            #expect(searchCount > 0)
            #expect(scrapeRatio <= 2, "scrape p99 with 16 searchers is \(scrapeRatio) × its p99 without")
            #expect(ingestRatio <= 2, "ingest p99 with 16 searchers is \(ingestRatio) × its p99 without")
        }
    }
}
