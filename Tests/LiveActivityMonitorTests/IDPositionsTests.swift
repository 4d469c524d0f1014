import Testing
@testable import LiveActivityMonitor

/// `IDPositions` against a dictionary, through its growth: every rehash keeps each id on its
/// position, whatever the order the positions were set in.
@Suite struct IDPositionsTests {
    @Test(arguments: [1, 2] as [UInt64])
    func idsKeepTheirPositionsThroughRehashes(seed: UInt64) {
        var random = PushEventScannerTests.Seeded(state: seed)
        var ids: [CompactID] = []                    // the "storage": position → id
        var positions = IDPositions()
        var grown = 0, slots = positions.slotCount
        func check() {
            for (position, id) in ids.enumerated() { #expect(positions.position(of: id) { ids[$0] } == position) }
            #expect(positions.position(of: CompactID("absent")) { ids[$0] } == nil)
            #expect(positions.count == ids.count)
        }
        for step in 0..<6_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0 where !ids.isEmpty:
                // Removed as the table removes: the last record moves into the gap.
                let at = Int.random(in: 0..<ids.count, using: &random)
                positions.remove(ids[at], at: at) { ids[$0] }
                let last = ids.count - 1
                if at != last {
                    positions.move(ids[last], from: last, to: at)
                    ids[at] = ids[last]
                }
                ids.removeLast()
            default:
                // Half of them UUIDs, as ActivityKit's: both of `CompactID`'s forms.
                let n = UInt32.random(in: 0...UInt32.max, using: &random)
                ids.append(CompactID(step.isMultiple(of: 2) ? "a\(seed)-\(step)-\(n)"
                                     : "\(String(format: "%08X", n))-0000-4000-8000-\(String(format: "%012d", step))"))
                positions.set(ids[ids.count - 1], to: ids.count - 1) { ids[$0] }
            }
            if positions.slotCount != slots {
                slots = positions.slotCount
                grown += 1
                check()
            }
        }
        check()
        #expect(grown >= 6, "\(grown) rehashes")
    }

    /// Made at once from records whose positions it then grows past.
    @Test func aLoadedTableGrows() {
        var ids = (0..<1_000).map { CompactID("loaded-\($0)") }
        var positions = IDPositions(count: ids.count) { ids[$0] }
        let slots = positions.slotCount
        while positions.slotCount == slots {
            ids.append(CompactID("new-\(ids.count)"))
            positions.set(ids[ids.count - 1], to: ids.count - 1) { ids[$0] }
        }
        for (position, id) in ids.enumerated() { #expect(positions.position(of: id) { ids[$0] } == position) }
    }
}
