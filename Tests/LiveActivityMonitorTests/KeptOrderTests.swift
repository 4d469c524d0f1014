import Foundation
import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// The wall's order is kept (`PhoneOrderIndex`, read by `ActivityTable.livePage`): after random
/// changes and moves of the clock, every page of the list, for every filter and through every
/// `next_cursor`, is the one the walk over every record chooses (`ReadHandlers.walkedPage`,
/// the oracle), with the same counts; and the kept cells equal cells built afresh in bulk.
@Suite struct KeptOrderTests {
    static let budget = 3
    /// Two spellings of one type (canonically equivalent, different bytes): the list's filter
    /// compares with `==`, so filtering by either shows both.
    static let types = ["RideAttributes", "DeliveryAttributes", "Caf\u{E9}Attributes", "Cafe\u{301}Attributes"]
    static let filters: [String?] = [nil] + types + ["NoSuchAttributes"]
    static let states: [ActivityState?] = [nil] + ActivityState.allCases

    /// Activity `n`'s id: short, or a UUID in either case (`CompactID`'s forms), so that ties
    /// in the phone order fall to ids of each form.
    static func id(_ n: Int) -> String {
        [String(format: "%08X-0000-4000-8000-%012X", n % 7, n), "a\(n)", String(format: "%08x-0000-4000-8000-%012x", n % 7, n)][n % 3]
    }

    /// A random record: few relevance scores and start times (so that ties fall to the next key),
    /// some scheduled, stale, ended (each dismissal kind) or dismissed, around `now`.
    static func record(_ id: String, now: Double, _ random: inout PushEventScannerTests.Seeded) -> ActivityRecord {
        func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }
        var r = ActivityRecord(activityID: id, bookingID: "BK-\(id)", attributesType: pick(types),
                               startedAt: now - pick([0, 60, 3600, 7 * 3600, 9 * 3600] as [Double]))
        r.relevanceScore = pick([nil, -5, 0, 50, 100] as [Double?])
        if Int.random(in: 0..<5, using: &random) == 0 { r.startDate = now + pick([60, 3600] as [Double]) }
        if Bool.random(using: &random) { r.staleDate = now + pick([-600, 30, 1800, 3 * 3600] as [Double]) }
        if Int.random(in: 0..<4, using: &random) == 0 { r.reportedStale = true }
        if Int.random(in: 0..<4, using: &random) == 0 {
            r.endedAt = now + pick([-3600, 0, 45, 600] as [Double])
            switch Int.random(in: 0..<3, using: &random) {
            case 0: r.dismissalPolicy = .immediate
            case 1: r.dismissalPolicy = .after; r.dismissalDate = now + pick([100, 2 * 3600] as [Double])
            default: break
            }
        }
        if Int.random(in: 0..<12, using: &random) == 0 { r.dismissedAt = now + pick([-1, 300] as [Double]) }
        return r
    }

    /// Thousands of records (past what `ByteRadixSort` leaves to comparisons), with relevance
    /// scores and start times that tie, differ in a low bit, or are 0 and -0 (equal by `==`):
    /// the cells built in bulk are the ones inserting each record makes.
    @Test func aBulkBuildIsTheOneInsertionsMake() {
        var random = PushEventScannerTests.Seeded(state: 9)
        let now = TestServer.base
        let records = (0..<3000).map { i in
            var r = Self.record("bulk-\(i)", now: now, &random)
            r.relevanceScore = [r.relevanceScore, -0.0, 0.37, 0.37.nextUp, 1e300][Int.random(in: 0..<5, using: &random)]
            if Bool.random(using: &random) { r.startedAt += [0, 0.5, 0.5.nextUp, -1e-6][Int.random(in: 0..<4, using: &random)] }
            return r
        }
        func key(_ position: Int32) -> PhoneOrderKey { PhoneOrderKey(records[Int(position)]) }
        var inserted = PhoneOrderIndex()
        for i in records.indices { inserted.move(i, from: nil, to: PhoneOrderIndex.Place(records[i], at: now), keys: key) }
        let bulk = records.withUnsafeBufferPointer { PhoneOrderIndex($0, at: now) }
        #expect(bulk.contents(key) == inserted.contents(key))
        #expect(bulk.contents(key).values.map(\.count).reduce(0, +) > 2000, "most records counted")
    }

    /// Random puts (new and replacing), removals, evictions of the oldest, and clock moves that
    /// the table is brought to (the writer) or not (a read running ahead of it); after each step,
    /// every page at the table's instant and at later ones against the walk.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func everyPageIsTheWalksPage(seed: UInt64) throws {
        var random = PushEventScannerTests.Seeded(state: seed)
        var table = ActivityTable(priority10Budget: Self.budget)
        var now = TestServer.base
        var compared = 0
        // Built in bulk from records put before the order is kept, as a store loads them.
        for i in 0..<30 { table.put(Self.record(Self.id(i), now: now, &random)) }
        table.keepGauges(priority10Budget: Self.budget, from: now)
        for step in 0..<250 {
            Self.change(&table, now: &now, &random, record: Self.record)
            #expect(table.keptPhoneOrder == table.withRecords { records in
                PhoneOrderIndex(records, at: table.gaugeTime).contents { PhoneOrderKey(records[Int($0)]) }
            }, "step \(step)")
            for t in [table.gaugeTime, now, now + 90, now + 5 * 3600] {
                compared += try Self.comparePages(table, at: t, step: step, limit: [1, 3, 1000].randomElement(using: &random)!)
            }
            // Before the table's instant (a clock set back), the list walks.
            #expect(table.livePage(at: table.gaugeTime - 1, state: nil, type: nil, after: nil, limit: 10) == nil)
        }
        #expect(compared > 10_000, "the pages compared held records")
    }

    /// One random change of `table`: a put of a random record (`record`; new or replacing), a
    /// removal, an eviction of the oldest, or a move of the clock that the table is brought to
    /// (the writer) or not (a read running ahead of it). The kept triage sets are tested on the
    /// same changes (`KeptTriageTests`).
    static func change(_ table: inout ActivityTable, now: inout Double, _ random: inout PushEventScannerTests.Seeded,
                       record: (String, Double, inout PushEventScannerTests.Seeded) -> ActivityRecord) {
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < 45 {
            let id = Self.id(Int.random(in: 0..<60, using: &random))
            table.put(record(id, now, &random))
        } else if roll < 55 {
            table.remove(CompactID(Self.id(Int.random(in: 0..<60, using: &random))))
        } else if roll < 58 {
            _ = table.removeOldestStarted(downTo: table.count - Int.random(in: 1...5, using: &random))
        } else if roll < 80 {
            now += [1, 30, 61, 600, 3600, 4 * 3600, 9 * 3600].randomElement(using: &random)!
            if Bool.random(using: &random) { table.advanceGauges(to: now) }
        }
    }

    /// Every page through the cursor, for every filter, at `t`: the kept order's against the walk's.
    /// How many records the pages held.
    static func comparePages(_ table: ActivityTable, at t: Double, step: Int, limit: Int) throws -> Int {
        var compared = 0
        for state in states {
            for type in filters {
                var query = try ReadHandlers.ListQuery(["state": state?.rawValue ?? "", "attributes_type": type ?? "",
                                                        "limit": "\(limit)"])
                while true {
                    let walked = ReadHandlers.walkedPage(query, in: table, now: t)
                    let kept = table.livePage(at: t, state: state, type: type, after: query.after?.key, limit: limit + 1)
                    let context = "step \(step) at \(t - TestServer.base) state \(state?.rawValue ?? "-") type \(type ?? "-")"
                    let sameIDs = kept?.records.map(\.activityID) == walked.records.map(\.activityID)
                    #expect(sameIDs, "\(context): \(kept?.records.map(\.activityID) ?? []) against \(walked.records.map(\.activityID))")
                    // The records copied whole (compared only when the ids agree: a record prints long).
                    if sameIDs { #expect(kept?.records == walked.records, "\(context)") }
                    #expect(kept?.counts == walked.counts, "\(context)")
                    compared += walked.records.count
                    guard walked.records.count > limit, kept?.records.count == walked.records.count else { break }
                    query.after = ReadHandlers.Cursor(walked.records[limit - 1])
                }
            }
        }
        return compared
    }

    /// Through the router, on the real engine and store: the stream of `KeptGaugeTests` (with
    /// relevance scores), and after each step, every page of every filter through `next_cursor`
    /// against the walk at the clock's "now": the same ids, cursors and counts.
    @Test(arguments: [5, 6] as [UInt64])
    func everyServedPageIsTheWalksPage(seed: UInt64) throws {
        try withInProcessMonitor(configure: { $0.priority10Budget = Self.budget }) { monitor in
            var pages = 0
            try KeptGaugeTests.exercise(KeptGaugeTests.Driver(monitor.monitor, time: monitor.time), seed: seed) { m, step in
                pages += try Self.compareServed(m, step: step)
            }
            #expect(pages > 1000)
        }
    }

    static func compareServed(_ m: KeptGaugeTests.Driver, step: Int) throws -> Int {
        let now = m.time.value
        let limit = 2
        var pages = 0
        for state in [nil] + ActivityState.counted {
            for type in [nil] + KeptGaugeTests.types {
                var query = try ReadHandlers.ListQuery(["state": state?.rawValue ?? "", "attributes_type": type ?? "",
                                                        "limit": "\(limit)"])
                while true {
                    var target = "/api/activities?limit=\(limit)"
                    if let state { target += "&state=\(state.rawValue)" }
                    if let type { target += "&attributes_type=\(type)" }
                    if let cursor = query.after?.text {
                        target += "&cursor=" + cursor.replacingOccurrences(of: "+", with: "%2B")
                    }
                    let response = m.handle(InProcessMonitor.request("GET", target, headers: [], body: []))
                    let served = try JSONParser.parse(response.body)
                    let walked = m.store.withLiveState { ReadHandlers.walkedPage(query, in: $0.records, now: now) }
                    let more = walked.records.count > limit
                    let context = "step \(step) \(target)"
                    #expect(served["activities"]?.arrayValue?.compactMap { $0["activity_id"]?.stringValue }
                            == walked.records.prefix(limit).map(\.activityID), "\(context)")
                    let cursor = more ? ReadHandlers.Cursor(walked.records[limit - 1]) : nil
                    #expect(served["next_cursor"]?.stringValue == cursor?.text, "\(context)")
                    let counts = ActivityState.counted.map { served["counts"]?[$0.rawValue]?.int64Value.map { Int($0) } }
                    #expect(counts == (0..<4).map { walked.counts[$0] }, "\(context)")
                    pages += 1
                    guard let cursor, served["next_cursor"]?.stringValue == cursor.text else { break }
                    query.after = cursor
                }
            }
        }
        return pages
    }

    /// The container both the id search and the wall's order are kept in, against a sorted set,
    /// past many chunk splits and merges.
    @Test func sortedChunksKeepASortedSet() {
        var random = PushEventScannerTests.Seeded(state: 11)
        var chunks = SortedChunks<PhoneOrderKey>()
        var oracle: [String: PhoneOrderKey] = [:]
        func key(_ n: Int) -> PhoneOrderKey {
            PhoneOrderKey(relevance: Double(n % 3), startedAt: Double(n % 7), activityID: CompactID("k\(n)"))
        }
        for step in 0..<20_000 {
            let n = Int.random(in: 0..<3000, using: &random)
            if Int.random(in: 0..<3, using: &random) < 2 {
                #expect(chunks.insert(key(n)) == (oracle.updateValue(key(n), forKey: "k\(n)") == nil))
            } else {
                #expect(chunks.remove(key(n)) == (oracle.removeValue(forKey: "k\(n)") != nil))
            }
            if step % 1000 == 0 || step == 19_999 {
                let sorted = oracle.values.sorted(by: PhoneOrderKey.ordered)
                #expect(chunks.all == sorted)
                #expect(chunks.count == sorted.count)
                #expect(SortedChunks(sorted: sorted).all == sorted)
                // From a position found by a binary search, the walk goes on in order.
                let from = key(Int.random(in: 0..<3000, using: &random))
                var p = chunks.firstPosition { PhoneOrderKey.ordered($0, from) }
                var walked: [PhoneOrderKey] = []
                while let k = chunks[p] { walked.append(k); p = chunks.position(after: p) }
                #expect(walked == sorted.filter { !PhoneOrderKey.ordered($0, from) })
            }
        }
        #expect(oracle.count > 1000)
    }
}
