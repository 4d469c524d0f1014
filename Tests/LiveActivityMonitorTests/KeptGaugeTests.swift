import Foundation
import HTTPServer
import JSON
import Prometheus
import Testing
@testable import LiveActivityMonitor

/// The activity gauges (`liveactivity_activities`, `…_priority10_heavy_activities`,
/// `…_channel_subscriptions`) are kept as records change, and by time alone (`ActivityGauges`):
/// after random event streams and random moves of the clock, the kept values equal a full
/// recount by the same per-record rule, at the writer's last instant and at "now", and
/// `/metrics` shows them.
@Suite struct KeptGaugeTests {
    static let budget = 3
    static let types = ["TimerWidgetAttributes", "RideAttributes", "DeliveryAttributes"]
    static let channels = ["Y2hhbm5lbC1h", "Y2hhbm5lbC1i"]
    /// Few values, so that the wall's order often falls to the start time and the id.
    static let relevances: [Double] = [-5, 0, 50, 100]

    /// A random stream: starts (some scheduled, some subscribed, some with a stale date or a
    /// relevance score), updates and pushes (many at priority 10, some moving the relevance),
    /// ends with each dismissal kind, dismissals, device-reported stale, broadcasts to the
    /// channels; between them, the clock moves by steps from a second to past the 8-hour end.
    /// After each step, `check` (the gauges against a recount, unless told otherwise).
    static func exercise(_ m: Driver, seed: UInt64, check: (Driver, Int) throws -> Void = KeptGaugeTests.compare) throws {
        var random = PushEventScannerTests.Seeded(state: seed)
        var started: [String] = []
        var now = TestServer.base
        var n = 0
        func key() -> String { n += 1; return "k\(seed)-\(n)" }
        func someID() -> String {
            Bool.random(using: &random) || started.isEmpty ? "g\(Int.random(in: 0..<16, using: &random))"
                : started.randomElement(using: &random)!
        }
        for step in 0..<160 {
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 18 {
                let moves: [Double] = [1, 7, 30, 61, 300, 1800, 3600, 4 * 3600, 9 * 3600]
                now += moves.randomElement(using: &random)! * Double.random(in: 0.5...1.5, using: &random)
                now = now.rounded()
                m.time.set(now)
            } else if roll < 26, let id = started.randomElement(using: &random) {
                // A burst at priority 10: over the budget for the next hour.
                m.post((0..<Int.random(in: 2...6, using: &random)).map { i in
                    Scenario.push(id, key(), at: now - Double(i * 10), token: IngestTests.token,
                                  extra: ["content_state": ["startedAt": now]])
                })
            } else {
                var events: [JSONValue] = []
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let (id, k) = (someID(), key())
                    events.append(event(id, started: &started, now: now, key: k, &random))
                }
                m.post(events)
            }
            try check(m, step)
        }
    }

    static func event(_ id: String, started: inout [String], now: Double, key: String,
                      _ random: inout PushEventScannerTests.Seeded) -> JSONValue {
        func around(_ spread: Double) -> Double { now + Double.random(in: -spread...spread, using: &random).rounded() }
        let at = min(now, around(120))
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<25:
            started.append(id)
            var o: [String: Any] = ["id": key, "type": "activity.started", "activity_id": id, "booking_id": "BK-\(id)",
                                    "attributes_type": types.randomElement(using: &random)!, "occurred_at": at,
                                    "content_state": ["startedAt": at], "push_token": IngestTests.token]
            if Int.random(in: 0..<3, using: &random) == 0 { o["start_date"] = at + Double(Int.random(in: 60...7200, using: &random)) }
            if Bool.random(using: &random) { o["stale_date"] = around(3 * 3600) }
            if Bool.random(using: &random) { o["channel_id"] = channels.randomElement(using: &random)! }
            if Bool.random(using: &random) { o["relevance_score"] = relevances.randomElement(using: &random)! }
            return JSONValue(o)
        case 25..<55:
            var extra: [String: Any] = ["content_state": ["startedAt": at]]
            if Bool.random(using: &random) { extra["stale_date"] = around(3600) }
            if Int.random(in: 0..<4, using: &random) == 0 { extra["relevance_score"] = relevances.randomElement(using: &random)! }
            return Scenario.push(id, key, at: at, priority: Int.random(in: 0..<5, using: &random) == 0 ? 5 : 10, token: IngestTests.token,
                                 extra: extra)
        case 55..<63:
            var extra: [String: Any] = ["content_state": ["startedAt": at]]
            if Bool.random(using: &random) { extra["dismissal_date"] = around(3 * 3600) }
            return Scenario.push(id, key, at: at, event: "end", token: IngestTests.token, extra: extra)
        case 63..<73:
            var o: [String: Any] = ["id": key, "type": "activity.ended", "activity_id": id, "occurred_at": at]
            switch Int.random(in: 0..<3, using: &random) {
            case 0: o["dismissal_policy"] = "immediate"
            case 1: o["dismissal_policy"] = "after"; o["dismissal_date"] = around(2 * 3600)
            default: break
            }
            return JSONValue(o)
        case 73..<78:
            return JSONValue(["id": key, "type": "activity.dismissed", "activity_id": id, "occurred_at": at] as [String: Any])
        case 78..<84:
            return JSONValue(["id": key, "type": "activity.stale", "activity_id": id, "occurred_at": at] as [String: Any])
        default:
            guard case .object(var o) = BroadcastTests.broadcast(Int.random(in: 0..<5, using: &random) == 0 ? "end" : "update",
                                                                 at: at, content: at,
                                                                 channel: channels.randomElement(using: &random)!) else { return .null }
            o["id"] = .string(key)
            return .object(o)
        }
    }

    /// The kept gauges against a recount: at the instant the writer last brought them to, at
    /// the clock's "now" (a scrape may run ahead of the writer) and a little later; and
    /// `/metrics` against the recount at "now".
    static func compare(_ m: Driver, step: Int) throws {
        let now = m.time.value
        let checks = m.store.withLiveState { s -> [(String, ActivityGauges, ActivityGauges)] in
            [s.records.gaugeTime, now, now + 90, now + 5 * 3600].filter(\.isFinite).map { t in
                ("step \(step) at \(t - TestServer.base)", s.records.gauges(at: t, priority10Budget: budget),
                 ActivityGauges.recount(s.records, at: t, budget: budget))
            }
        }
        for (instant, kept, recount) in checks { #expect(kept == recount, "\(instant)") }
        // What /metrics shows: reads the clock itself, which only the test moves.
        let expected = m.store.withLiveState { ActivityGauges.recount($0.records, at: now, budget: budget) }
        let text = m.metrics()
        for (i, state) in ActivityState.counted.enumerated() {
            let shown = samples(of: MonitorMetrics.activities.name, in: text)
                .filter { $0.labels.contains("state=\"\(state.rawValue)\"") }.map(\.value).reduce(0, +)
            #expect(Int(shown) == expected.byType.values.map { $0.states[i] }.reduce(0, +), "step \(step) \(state)")
        }
        let subscribed = samples(of: MonitorMetrics.channelSubscriptions.name, in: text).map(\.value).reduce(0, +)
        #expect(Int(subscribed) == expected.byType.values.map(\.subscribed).reduce(0, +), "step \(step) subscriptions")
        #expect(MetricsText.value(of: MonitorMetrics.priority10Heavy.name, in: text) == Double(expected.heavy), "step \(step) heavy")
    }

    /// The monitor as these tests drive it: through its router, in process.
    struct Driver {
        let time: ManualTime
        let store: any MonitorStore
        let handle: (HTTPRequest) -> HTTPResponse

        init<Store: MonitorStore>(_ monitor: Monitor<Store>, time: ManualTime) {
            self.time = time
            store = monitor.store
            handle = monitor.handle
        }

        func post(_ events: [JSONValue]) {
            _ = handle(InProcessMonitor.request("POST", "/v1/events", headers: [("Content-Type", "application/json")],
                                                body: Array(JSONValue.array(events).jsonString.utf8)))
        }

        func metrics() -> String {
            String(decoding: handle(InProcessMonitor.request("GET", "/metrics", headers: [], body: [])).body, as: UTF8.self)
        }
    }

    /// The samples of `family` in an exposition: (labels as written, value).
    static func samples(of family: String, in text: String) -> [(labels: String, value: Double)] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix(family + "{"), let close = line.lastIndex(of: "}"),
                  let value = Double(line[line.index(after: close)...].trimmingCharacters(in: .whitespaces)) else { return nil }
            return (String(line[..<close]), value)
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func keptGaugesEqualARecountOnSQLite(seed: UInt64) throws {
        try withInProcessMonitor(configure: { $0.priority10Budget = Self.budget }) { monitor in
            try Self.exercise(Driver(monitor.monitor, time: monitor.time), seed: seed)
        }
    }

    @Test(arguments: [4] as [UInt64])
    func keptGaugesEqualARecountOnPostgres(seed: UInt64) throws {
        try withPostgresInProcessMonitor(configure: { $0.priority10Budget = Self.budget }) { monitor in
            try Self.exercise(Driver(monitor.monitor, time: monitor.time), seed: seed)
        }
    }

    /// The gauges survive a restart: the store counts them afresh from its tables.
    @Test func keptGaugesAfterARestart() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? TemporaryDirectory.remove(directory) }
        let (clock, time) = Clock.manual(TestServer.base)
        var c = MonitorConfiguration.forTesting(directory: directory, clock: clock)
        c.priority10Budget = Self.budget
        do {
            let monitor = try buildMonitor(c)
            defer { monitor.store.close() }
            try Self.exercise(Driver(monitor, time: time), seed: 9)
        }
        time.advance(by: 2 * 3600)
        let monitor = try buildMonitor(c)
        defer { monitor.store.close() }
        try Self.compare(Driver(monitor, time: time), step: -1)
    }

    /// Time moving the gauges takes the due entries out of the queue in place. Taken as an
    /// argument of a call on the table, they were taken while that call held a copy of the table,
    /// so each step copied the whole queue: at 1,000,000 live activities, a million entries in
    /// every commit with a change due (ingest fell by a sixth; Tests/bench/PERFORMANCE.md).
    @Test func timeMovesTheGaugesWithoutCopyingTheQueue() {
        let t0 = TestServer.base
        var table = ActivityTable(priority10Budget: Self.budget)
        for i in 0..<1000 {
            var record = ActivityRecord(activityID: "a\(i)", bookingID: nil, attributesType: Self.types[0], startedAt: t0 - 60)
            record.staleDate = t0 + Double(i)
            table.put(record)
        }
        table.keepGauges(priority10Budget: Self.budget, from: t0)
        let storage = table.gaugeChangesStorage
        // Ten stale dates pass: ten entries out, each record's next instant (its 8-hour end) in.
        table.advanceGauges(to: t0 + 10.5)
        #expect(table.gaugeChangesStorage == storage)
        #expect(table.gauges(at: t0 + 10.5, priority10Budget: Self.budget)
                == ActivityGauges.recount(table, at: t0 + 10.5, budget: Self.budget))
    }

    /// One activity whose stale date moves earlier at each update: each update queues a new
    /// instant, so the queue is rebuilt again and again, and must hold the record's newest.
    @Test func aRebuiltQueueHoldsEachRecordsNewestInstant() {
        let t0 = TestServer.base
        var table = ActivityTable(priority10Budget: Self.budget)
        table.keepGauges(priority10Budget: Self.budget, from: t0)
        var record = ActivityRecord(activityID: "a", bookingID: nil, attributesType: Self.types[0], startedAt: t0 - 60)
        for i in 0..<400 {
            record.staleDate = t0 + 1000 - Double(i)
            table["a"] = record
            let t = t0 + 1000 - Double(i) + 0.5
            #expect(table.gauges(at: t, priority10Budget: Self.budget)
                    == ActivityGauges.recount(table, at: t, budget: Self.budget), "update \(i)")
        }
    }
}
