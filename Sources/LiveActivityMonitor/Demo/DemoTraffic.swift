import Dispatch
import Foundation
import HTTPServer
import JSON
import Synchronization

/// `serve --demo`: realistic, endless traffic for both seed apps (workout timers and ride
/// bookings, with the faults real fleets see), posted over real HTTP to the server's own
/// `POST /v1/events`, so it takes the same path as a real backend: decoding, validation,
/// bearer token, group commit, state engine, metrics.
///
/// What happens is decided by `DemoScenario` from a seed; this class only runs it on a
/// background thread, posting every `tickSeconds` the events that have come due, and stops
/// promptly on `stop()`. Safe for concurrent use: the thread owns the scenario and the HTTP
/// client; the stop flag and the statistics sit behind a `Mutex`.
final class DemoTraffic: Sendable {
    /// The seed used unless one is given: fixed, so that two runs (and tests) see the same traffic.
    static let defaultSeed: UInt64 = 0x11FE_AC71_5EED_2026
    /// More events than this go in several requests (the server takes at most 1000 per request).
    static let maxEventsPerRequest = 500
    /// A batch the server could not store (transport error, 5xx) is posted again this many times
    /// (safe: every event has an idempotency key), then dropped.
    static let attemptsPerBatch = 3

    struct Options: Sendable {
        /// Activities started per minute, both apps together.
        var ratePerMinute = 20.0
        var seed = DemoTraffic.defaultSeed
        /// Changes only identities (ids, tokens, bookings); nil derives one from the start time so
        /// that a second run on the same database is new traffic rather than duplicates.
        var runTag: UInt64?
        /// Activities tracked at once, at most: bounds memory however long the demo runs.
        var maxLive = 200
        var tickSeconds = 0.25
        var backfill = true
        var openingBurst = true
        var clock = Clock.system
        /// Where failures are reported (at most one line per 30 s).
        var log: @Sendable (String) -> Void = { _ in }
    }

    /// What the demo has done so far.
    struct Statistics: Sendable {
        var requests = 0
        var eventsPosted = 0
        var accepted = 0
        var duplicates = 0
        var failedRequests = 0
        var droppedEvents = 0
        var lastFailure: String?
        /// Activities scripted so far, and those whose script is still running.
        var activitiesStarted = 0
        var liveActivities = 0
        /// Arrivals skipped because `maxLive` activities were running.
        var arrivalsSkipped = 0
    }

    private struct Control {
        var stopping = false
        var statistics = Statistics()
    }

    private let control = Mutex(Control())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = Gate()

    private init() {}

    /// Starts the demo against the server at `baseURL` (as `MonitorServer.baseURL` gives it).
    static func start(baseURL: String, token: String?, ratePerMinute: Double) -> DemoTraffic {
        var options = Options()
        options.ratePerMinute = ratePerMinute
        return start(baseURL: baseURL, token: token, options: options)
    }

    static func start(baseURL: String, token: String?, options: Options) -> DemoTraffic {
        let demo = DemoTraffic()
        let (host, port) = loopbackAddress(baseURL)
        Thread.start(named: "demo-traffic") { demo.run(host: host, port: port, token: token, options: options) }
        return demo
    }

    /// Stops generating; returns once the thread has finished its current request.
    func stop() {
        control.withLock { $0.stopping = true }
        wake.signal()
        finished.wait()
    }

    var statistics: Statistics { control.withLock { $0.statistics } }

    /// Where to connect for `baseURL`: a wildcard bind address (`0.0.0.0`, or `::`, which the
    /// server binds dual-stack) is reached at 127.0.0.1; a specific IPv4 or IPv6 address, such
    /// as `::1`, as it is (`HTTPClient` speaks both).
    static func loopbackAddress(_ baseURL: String) -> (host: String, port: Int) {
        var rest = Substring(baseURL)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        var host = "127.0.0.1"
        var port = MonitorConfiguration.defaultPort
        if let colon = rest.lastIndex(of: ":"), let p = Int(rest[rest.index(after: colon)...]) {
            port = p
            host = String(rest[..<colon])
        } else {
            host = String(rest)
        }
        host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if ["", "0.0.0.0", "::", "localhost"].contains(host) { host = "127.0.0.1" }
        return (host, port)
    }

    private func run(host: String, port: Int, token: String?, options: Options) {
        defer { finished.open() }
        let client = HTTPClient(host: host, port: port, timeoutSeconds: 10)
        defer { client.close() }
        let start = options.clock.now()
        var settings = DemoScenario.Settings()
        settings.seed = options.seed
        settings.runTag = options.runTag ?? UInt64(start * 1000)
        settings.ratePerMinute = options.ratePerMinute
        settings.maxLive = options.maxLive
        settings.backfill = options.backfill
        settings.openingBurst = options.openingBurst
        var scenario = DemoScenario(settings: settings, start: start)
        var headers = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        var queue: [JSONObject] = []
        var attempts = 0
        var lastLog = -Double.infinity

        while !control.withLock({ $0.stopping }) {
            queue += scenario.events(until: options.clock.now())
            while !queue.isEmpty, !control.withLock({ $0.stopping }) {
                let batch = Array(queue.prefix(Self.maxEventsPerRequest))
                let outcome = post(batch, client: client, headers: headers)
                attempts += 1
                let retry = outcome.retryable && attempts < Self.attemptsPerBatch
                control.withLock { c in
                    c.statistics.requests += 1
                    if outcome.failure == nil {
                        c.statistics.eventsPosted += batch.count
                        c.statistics.accepted += outcome.accepted
                        c.statistics.duplicates += outcome.duplicates
                    } else {
                        c.statistics.failedRequests += 1
                        c.statistics.lastFailure = outcome.failure
                        if !retry { c.statistics.droppedEvents += batch.count }
                    }
                }
                if let failure = outcome.failure {
                    let now = options.clock.now()
                    if now - lastLog >= 30 {
                        lastLog = now
                        options.log("demo: POST /v1/events failed (\(failure)); "
                            + (retry ? "retrying" : "dropping \(batch.count) events"))
                    }
                    if retry { break }
                }
                queue.removeFirst(batch.count)
                attempts = 0
            }
            control.withLock { c in
                c.statistics.activitiesStarted = scenario.started
                c.statistics.liveActivities = scenario.live
                c.statistics.arrivalsSkipped = scenario.skipped
            }
            _ = wake.wait(timeout: .now() + options.tickSeconds)
        }
    }

    private struct Outcome {
        var accepted = 0
        var duplicates = 0
        var failure: String?
        /// Worth posting again: the server may not have stored it (no answer, or a 5xx).
        var retryable = false
    }

    private func post(_ batch: [JSONObject], client: HTTPClient, headers: [(String, String)]) -> Outcome {
        let body = JSONValue.array(batch.map(JSONValue.object)).jsonBytes
        let response: HTTPClient.Response
        do {
            response = try client.request("POST", "/v1/events", headers: headers, body: body)
        } catch {
            return Outcome(failure: error.description, retryable: true)
        }
        guard response.status == 200 else {
            let detail = String(response.text.prefix(300))
            return Outcome(failure: "HTTP \(response.status): \(detail)", retryable: response.status >= 500)
        }
        var outcome = Outcome()
        // The counts are statistics only: a body without them leaves them at zero.
        if let parsed = try? JSONParser.parse(response.body), case .object(let o) = parsed {
            if case .number(let n)? = o["accepted"] { outcome.accepted = n.intValue ?? 0 }
            if case .number(let n)? = o["duplicates"] { outcome.duplicates = n.intValue ?? 0 }
        }
        return outcome
    }
}
