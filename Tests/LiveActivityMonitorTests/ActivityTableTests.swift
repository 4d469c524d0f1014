import Testing
@testable import LiveActivityMonitor

/// The live-activity table and the list's page selection: the same answers as a dictionary and
/// a full sort, which they replaced for speed.
@Suite struct ActivityTableTests {
    /// Records with many ties in relevance and start time, so the id decides often.
    static func records(_ n: Int, seed: UInt64) -> [ActivityRecord] {
        var g = seed
        func next(_ bound: Int) -> Int {
            g = g &* 6364136223846793005 &+ 1442695040888963407
            return Int((g >> 33) % UInt64(bound))
        }
        return (0..<n).map { i in
            var r = ActivityRecord(activityID: "a\(next(n * 4))-\(i)", bookingID: "b\(i)",
                                   attributesType: next(2) == 0 ? "TimerWidgetAttributes" : "LiveActivityAttributes",
                                   startedAt: Double(1_800_000_000 + next(5)))
            r.relevanceScore = next(3) == 0 ? nil : Double(next(3)) / 2
            return r
        }
    }

    @Test(arguments: [0, 1, 7, 100, 101, 1000])
    func selectionEqualsFullSort(limit: Int) {
        let all = Self.records(500, seed: UInt64(limit) + 1)
        let expected = Array(all.sorted(by: ActivityRecord.phoneOrder).prefix(limit))
        let chosen = all.withUnsafeBufferPointer { records in
            var selection = FirstInOrder<Int>(limit: limit) { ActivityRecord.phoneOrder(records[$0], records[$1]) }
            for i in records.indices { selection.offer(i) }
            return selection.sorted().map { records[$0] }
        }
        #expect(chosen.map(\.activityID) == expected.map(\.activityID))
    }

    /// A channel's subscribers tallied a chunk of ids at a time (`tally`, as the channel pages
    /// read them) are the subscribed records filtered and sorted whole: the count, and the first
    /// `limit` in phone order, for any page size and at any time. Another channel's records
    /// among the ids are not counted.
    @Test(arguments: [0, 1, 7, 100, 2000])
    func channelSubscribersEqualAFilterAndAFullSort(limit: Int) {
        var random = PushEventScannerTests.Seeded(state: UInt64(limit) + 5)
        let now = TestServer.base
        let all = (0..<1500).map { i in
            var r = KeptOrderTests.record("s\(i)", now: now, &random)
            r.channelID = [nil, "c", "c", "d"][Int.random(in: 0..<4, using: &random)]
            return r
        }
        var table = ActivityTable()
        for r in all { table[r.activityID] = r }
        let ids = Array(table.subscriberIDs(of: "c")) + [CompactID("s-none"), all.first { $0.channelID == "d" }!.id]
        for at in [now, now + 1800, now + 9 * 3600] {
            let expected = all.filter { $0.channelID == "c" && $0.isSubscribed(at: at) }.sorted(by: ActivityRecord.phoneOrder)
            var count = 0
            var selection = FirstInOrder<PhoneOrderKey>(limit: limit, ordered: PhoneOrderKey.ordered)
            for start in stride(from: 0, to: ids.count, by: 97) {
                table.tally(ids[start..<min(start + 97, ids.count)], subscribedTo: "c", at: at, count: &count, into: &selection)
            }
            #expect(count == expected.count, "at +\(at - now) s")
            #expect(selection.sorted().map(\.activityID) == expected.prefix(limit).map(\.id), "at +\(at - now) s")
        }
        #expect(table.subscriberIDs(of: "none").isEmpty)
    }

    @Test func tableMatchesADictionaryThroughInsertsReplacementsAndRemovals() {
        var table = ActivityTable()
        var reference: [String: ActivityRecord] = [:]
        let all = Self.records(300, seed: 42)
        for (i, record) in all.enumerated() {
            table[record.activityID] = record
            reference[record.activityID] = record
            if i % 3 == 0 {
                var changed = record
                changed.tokenRotations = i
                table[record.activityID] = changed
                reference[record.activityID] = changed
            }
            if i % 5 == 0 {
                let victim = all[i / 2].activityID
                table[victim] = nil
                reference[victim] = nil
            }
        }
        #expect(table.count == reference.count)
        for (id, record) in reference { #expect(table[id] == record) }
        for record in all where reference[record.activityID] == nil { #expect(table[record.activityID] == nil) }
        let ids = table.withRecords { records in records.indices.map { records[$0].activityID } }
        #expect(Set(ids) == Set(reference.keys))
    }

    /// Removals move the table's last record into the gap, and every index that names records
    /// by position (`IDPositions`, the id search, the gauge and deadline queues) must follow it:
    /// through random puts, updates, removals and moves of the clock, each id still leads to its
    /// own record, each search entry to the record whose id or booking it holds, the kept gauges
    /// to a recount (the gauge queue still fires each record's change) and the deadline queue
    /// to every record whose deadline is due.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func removalsKeepEveryIndexOnItsRecord(seed: UInt64) {
        var random = PushEventScannerTests.Seeded(state: seed)
        let budget = EngineSettings.defaultPriority10Budget
        var now = 1_800_000_000.0
        var table = ActivityTable(priority10Budget: budget)
        table.keepGauges(priority10Budget: budget, from: now)
        var reference: [String: ActivityRecord] = [:]
        var removals = 0
        for step in 0..<2400 {
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 35, let id = reference.keys.randomElement(using: &random) {
                removals += table.withRecords { $0.last?.activityID } == id ? 0 : 1
                table[id] = nil
                reference[id] = nil
            } else if roll < 92 {
                let n = Int.random(in: 0..<300, using: &random)
                // Few bookings, some with capitals: search keys tie, and their order falls to the ids.
                var r = ActivityRecord(activityID: ["a\(n)", "A\(n)x"][n % 2],
                                       bookingID: n % 5 == 0 ? nil : ["bk-\(n % 40)", "BK-\(n % 7)"][n % 3 == 0 ? 1 : 0],
                                       attributesType: ["T", "U"][n % 2],
                                       startedAt: now - Double(Int.random(in: 0..<(8 * 3600), using: &random)))
                if Bool.random(using: &random) { r.staleDate = now + Double(Int.random(in: 1..<(4 * 3600), using: &random)) }
                r.relevanceScore = Double(n % 3)
                table.put(r)
                reference[r.activityID] = r
            } else {
                now += Double(Int.random(in: 1..<1800, using: &random))
                table.advanceGauges(to: now)
            }
            guard step % 40 == 39 else { continue }
            #expect(table.count == reference.count)
            for (id, r) in reference { #expect(table[id] == r, "\(id) leads to its record") }
            // Each record's own id once, and its booking id once if it has one: an entry left at
            // a moved record's old place, or one not taken out, shows here.
            let entries = table.searchEntries(withPrefix: "", after: nil, max: .max)
            let expected = table.withRecords { records in
                records.indices.flatMap { i in
                    [IDSearchIndex.Entry(position: i, isBooking: false)]
                        + (records[i].bookingID == nil ? [] : [IDSearchIndex.Entry(position: i, isBooking: true)])
                }
            }
            #expect(Set(entries) == Set(expected), "each record's entries, each once")
            #expect(entries.count == reference.values.reduce(0) { $0 + ($1.bookingID == nil ? 1 : 2) })
            for q in ["", "a1", "bk-1", "bk-", "a"] {
                let expected = reference.values.filter { SearchIndexTests.matches($0, q) }.map(\.activityID).sorted()
                #expect(SearchIndexTests.found(table, q, slice: 3).sorted() == expected, "q=\(q)")
            }
            // Ahead of the kept instant: the gauge queue's due entries correct the kept gauges.
            for ahead: Double in [0, 600, 3 * 3600, 9 * 3600] {
                let t = now + ahead
                #expect(table.gauges(at: t, priority10Budget: budget) == ActivityGauges.recount(table, at: t, budget: budget),
                        "gauges at +\(ahead)")
                var copy = table
                let due = Set(copy.popDueDeadlines(t).ids)
                let expected = reference.values.filter { ($0.nextDeadline ?? .infinity) <= t }.map(\.activityID)
                #expect(Set(expected).isSubset(of: due), "deadlines due at +\(ahead)")
            }
        }
        #expect(removals > 300, "removals that moved a record: \(removals)")
    }

    /// A put that keeps a record's deadline queues nothing (most events move none: a push per
    /// event kept the queue near twice the records), and yet no deadline is lost: through random
    /// puts that keep or move deadlines, removals, and sweeps that take what is due and put the
    /// records back (advanced, or as they were: an entry taken early for a record that did not
    /// change), every record whose deadline is due is still taken.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func putsThatKeepADeadlineQueueNothingAndLoseNone(seed: UInt64) {
        var random = PushEventScannerTests.Seeded(state: seed)
        var now = 1_800_000_000.0
        var table = ActivityTable()
        var reference: [String: ActivityRecord] = [:]
        func put(_ r: ActivityRecord) { table.put(r); reference[r.activityID] = r }
        for step in 0..<3000 {
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 10, let id = reference.keys.randomElement(using: &random) {
                table[id] = nil
                reference[id] = nil
            } else if roll < 40, var r = reference.values.randomElement(using: &random) {
                // An update that keeps the deadline.
                r.tokenRotations += 1
                put(r)
            } else if roll < 75 {
                let n = Int.random(in: 0..<200, using: &random)
                var r = reference["a\(n)"] ?? ActivityRecord(activityID: "a\(n)", bookingID: nil, attributesType: "T",
                                                              startedAt: now - Double(Int.random(in: 0..<(8 * 3600), using: &random)))
                r.staleDate = Bool.random(using: &random) ? now + Double(Int.random(in: -600..<(4 * 3600), using: &random)) : nil
                put(r)
            } else {
                now += Double(Int.random(in: 1..<900, using: &random))
                // A sweep: what is due taken, and each record put back, stale counted or as it was.
                for id in table.popDueDeadlines(now, limit: Int.random(in: 1..<50, using: &random)).ids {
                    guard var r = reference[id] else { continue }
                    if Bool.random(using: &random), let stale = r.staleDate, stale <= now { r.staleCounted = true }
                    put(r)
                }
            }
            guard step % 30 == 29 else { continue }
            for ahead: Double in [0, 600, 3 * 3600, 9 * 3600] {
                let t = now + ahead
                var copy = table
                let due = Set(copy.popDueDeadlines(t).ids)
                let expected = reference.values.filter { ($0.nextDeadline ?? .infinity) <= t }.map(\.activityID)
                #expect(Set(expected).isSubset(of: due), "deadlines due at +\(ahead), step \(step)")
            }
        }
        #expect(reference.count > 50)
    }

    /// Ten puts of each record that keep its deadline leave one entry per record.
    @Test func updatesThatKeepTheDeadlineLeaveOneEntryEach() {
        var table = ActivityTable()
        let records = Self.records(100, seed: 7)
        for var r in records {
            for k in 0..<10 {
                r.tokenRotations = k
                table.put(r)
            }
        }
        #expect(table.queuedDeadlines == records.count)
    }
}
