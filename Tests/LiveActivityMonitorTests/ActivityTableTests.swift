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
}
