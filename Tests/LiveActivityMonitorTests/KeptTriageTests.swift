import Foundation
import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// The triage groups are kept (`TriageIndex`, read by `ActivityTable.keptTriage`): after random
/// changes and moves of the clock, every group's count and first entries are those a walk that
/// judges every record by `TriageProblem.of` finds (`ReadHandlers.walkedTriage`, the oracle), at
/// the table's instant and later ones (a read running ahead of the writer), and the kept sets
/// equal sets built afresh in bulk; through the router, `GET /api/triage` shows the walk's.
@Suite struct KeptTriageTests {
    static let budget = 3
    static let day = TriageProblem.frozenAfter

    /// A random record of `KeptOrderTests` (every state, dismissal kind, few start times), with
    /// random problems: a content timestamp a day ahead and a little (so that time alone clears it
    /// within the clock's moves) or far ahead (milliseconds), an undecodable push, missed
    /// deliveries, a dead token, a failed last push, priority-10 pushes around the budget.
    static func record(_ id: String, now: Double, _ random: inout PushEventScannerTests.Seeded) -> ActivityRecord {
        func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }
        func often() -> Bool { Int.random(in: 0..<3, using: &random) == 0 }
        var r = KeptOrderTests.record(id, now: now, &random)
        if often() { r.contentTimestamp = now + pick([day - 30, day + 45, day + 700, 2 * day, now * 1000] as [Double]) }
        if often() { r.undecodable = .init(at: now - 5, detail: "not the declared shape") }
        if often() { r.delivery.missed = pick([1, 2]) }
        if often() { r.tokenInvalidReason = pick(["Unregistered", "BadDeviceToken"]) }
        if often() {
            r.lastPush = .init(status: pick([200, 410, 429, 500]), reason: nil, latencyMs: 40, priority: 10, at: now - 10)
        }
        if often() {
            for _ in 0..<Int.random(in: 1...6, using: &random) { r.priority10.record(now - pick([0, 50, 600, 3000, 3590] as [Double])) }
        }
        return r
    }

    /// Random puts (new and replacing), removals, evictions of the oldest, and clock moves that
    /// the table is brought to (the writer) or not; after each step, every group at the table's
    /// instant and at later ones against the walk.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func everyGroupIsTheWalksGroup(seed: UInt64) {
        var random = PushEventScannerTests.Seeded(state: seed)
        var table = ActivityTable(priority10Budget: Self.budget)
        var now = TestServer.base
        var listed = 0
        for i in 0..<30 { table.put(Self.record("a\(i)", now: now, &random)) }
        #expect(table.keptTriage(at: now, limit: 10, priority10Budget: Self.budget) == nil, "not kept before keepGauges")
        table.keepGauges(priority10Budget: Self.budget, from: now)
        for step in 0..<300 {
            KeptOrderTests.change(&table, now: &now, &random, record: Self.record)
            #expect(table.keptTriageSets == table.withRecords { TriageIndex($0, at: table.gaugeTime, budget: Self.budget) },
                    "step \(step)")
            for t in [table.gaugeTime, now, now + 50, now + 90, now + 800, now + 5 * 3600] {
                listed += Self.compare(table, at: t, limit: [1, 3, 500].randomElement(using: &random)!, "step \(step)")
            }
            // Before the table's instant (a clock set back), or at another budget, the triage walks.
            #expect(table.keptTriage(at: table.gaugeTime - 1, limit: 10, priority10Budget: Self.budget) == nil)
            #expect(table.keptTriage(at: now, limit: 10, priority10Budget: Self.budget + 1) == nil)
        }
        #expect(listed > 5_000, "the groups compared held records")
    }

    /// The kept groups at `t` against the walk's: counts and the activities listed, in order.
    /// How many activities the groups listed.
    static func compare(_ table: ActivityTable, at t: Double, limit: Int, _ context: String) -> Int {
        let walked = ReadHandlers.walkedTriage(in: table, at: t, limit: limit, priority10Budget: budget)
        guard let kept = table.keptTriage(at: t, limit: limit, priority10Budget: budget) else {
            Issue.record("\(context) at \(t - TestServer.base): not answered from the kept sets")
            return 0
        }
        let ids = { (groups: [(count: Int, positions: [Int])]) in
            table.withRecords { records in groups.map { ($0.count, $0.positions.map { records[$0].activityID }) } }
        }
        let (k, w) = (ids(kept), ids(walked))
        for (problem, (a, b)) in zip(TriageProblem.allCases, zip(k, w)) {
            #expect(a.0 == b.0 && a.1 == b.1, "\(context) at \(t - TestServer.base) \(problem): \(a) against \(b)")
        }
        return w.map(\.1.count).reduce(0, +)
    }

    /// Through the router, on the real engine and store: the stream of `KeptGaugeTests`, with
    /// pushes that fail, kill the token or carry a timestamp a day ahead; after each step,
    /// `GET /api/triage` against the walk at the clock's "now", and the kept sets against sets
    /// built afresh.
    static func exercise(_ m: KeptGaugeTests.Driver, seed: UInt64) throws -> Int {
        var random = PushEventScannerTests.Seeded(state: seed &+ 100)
        var listed = 0
        try KeptGaugeTests.exercise(m, seed: seed) { m, step in
            let now = m.time.value
            if Int.random(in: 0..<3, using: &random) == 0 {
                let id = "g\(Int.random(in: 0..<16, using: &random))"
                let key = "t\(seed)-\(step)"
                m.post([Int.random(in: 0..<3, using: &random) == 0
                    ? Scenario.push(id, key, at: now - 1, token: IngestTests.token,
                                    timestamp: now + day + [5, 100, 4000].randomElement(using: &random)!,
                                    content: ["startedAt": now])
                    : Scenario.push(id, key, at: now - 1, status: [410, 429, 500].randomElement(using: &random)!,
                                    priority: 5, token: IngestTests.token)])
            }
            listed += try Self.compareServed(m, step: step)
        }
        return listed
    }

    /// How many activities the groups counted.
    static func compareServed(_ m: KeptGaugeTests.Driver, step: Int) throws -> Int {
        let now = m.time.value
        let response = m.handle(InProcessMonitor.request("GET", "/api/triage?limit=2", headers: [], body: []))
        let served = try JSONParser.parse(response.body)
        let (walked, keptEqualsBuilt) = m.store.withLiveState { s in
            let groups = ReadHandlers.walkedTriage(in: s.records, at: now, limit: 2, priority10Budget: budget)
            let ids = s.records.withRecords { records in groups.map { ($0.count, $0.positions.map { records[$0].activityID }) } }
            return (ids, s.records.keptTriageSets == s.records.withRecords { TriageIndex($0, at: s.records.gaugeTime, budget: budget) })
        }
        #expect(keptEqualsBuilt, "step \(step)")
        let groups = served["problems"]?.arrayValue ?? []
        var listed = 0
        for (problem, (group, expected)) in zip(TriageProblem.allCases, zip(groups, walked)) where problem != .startNotStarted {
            #expect(group["problem"]?.stringValue == problem.rawValue)
            #expect(group["count"]?.int64Value == Int64(expected.0), "step \(step) \(problem)")
            #expect((group["items"]?.arrayValue ?? []).compactMap { $0["activity_id"]?.stringValue } == expected.1,
                    "step \(step) \(problem)")
            listed += expected.0
        }
        return listed
    }

    @Test(arguments: [5, 6] as [UInt64])
    func theServedTriageIsTheWalksOnSQLite(seed: UInt64) throws {
        try withInProcessMonitor(configure: { $0.priority10Budget = Self.budget }) { monitor in
            let listed = try Self.exercise(KeptGaugeTests.Driver(monitor.monitor, time: monitor.time), seed: seed)
            #expect(listed > 50, "the groups compared held activities: \(listed)")
        }
    }

    @Test(arguments: [7] as [UInt64])
    func theServedTriageIsTheWalksOnPostgres(seed: UInt64) throws {
        try withPostgresInProcessMonitor(configure: { $0.priority10Budget = Self.budget }) { monitor in
            let listed = try Self.exercise(KeptGaugeTests.Driver(monitor.monitor, time: monitor.time), seed: seed)
            #expect(listed > 50, "the groups compared held activities: \(listed)")
        }
    }

    /// A card frozen by a timestamp a day and a minute ahead: the minute after, with no event and
    /// no commit, it leaves the group, exactly at the instant `of` stops finding it.
    @Test func timeAloneEndsAFreeze() {
        let t0 = TestServer.base
        var table = ActivityTable(priority10Budget: Self.budget)
        table.keepGauges(priority10Budget: Self.budget, from: t0)
        var record = ActivityRecord(activityID: "f", bookingID: nil, attributesType: "RideAttributes", startedAt: t0 - 60)
        record.contentTimestamp = t0 + Self.day + 60
        table["f"] = record
        let until = TriageProblem.frozenUntil(record)
        let frozen = TriageProblem.futureTimestamp.index
        for (t, count) in [(t0, 1), (until.nextDown, 1), (until, 0), (t0 + 3600, 0)] {
            #expect(table.keptTriage(at: t, limit: 5, priority10Budget: Self.budget)?[frozen].count == count, "at \(t - t0)")
        }
        #expect(table.nextGaugeChange == until, "one wake-up, at the freeze's end")
        table.advanceGauges(to: until)
        #expect(table.keptTriageSets?.contents[frozen] == [], "moved out by time")
        #expect(table.nextGaugeChange != until)
    }

    /// The problems' bits (`index`, a `switch` of its own so that the rules copy no record) are
    /// their places in `allCases`, the order the page lists them in; and the states' `==` (also
    /// a `switch`) tells the cases apart as their names do.
    @Test func theHandWrittenOrdersAreTheCases() {
        for (place, problem) in TriageProblem.allCases.enumerated() {
            #expect(problem.index == place, "\(problem)")
        }
        for a in ActivityState.allCases {
            for b in ActivityState.allCases { #expect((a == b) == (a.rawValue == b.rawValue), "\(a), \(b)") }
        }
    }
}
