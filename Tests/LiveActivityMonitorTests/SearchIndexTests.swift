import Foundation
import Testing
@testable import LiveActivityMonitor

/// `?q=` through the id index (`IDSearchIndex`): the same matches as checking every record's
/// ids, through inserts, booking changes and removals, and read in slices.
@Suite struct SearchIndexTests {
    /// Whether `r` matches `q` by the rule the index serves: a prefix of either id, any case.
    static func matches(_ r: ActivityRecord, _ q: String) -> Bool {
        r.activityID.lowercased().utf8.starts(with: q.utf8) || (r.bookingID?.lowercased().utf8.starts(with: q.utf8) ?? false)
    }

    /// The activities the index yields for `q`, read `slice` entries at a time, each once.
    static func found(_ table: ActivityTable, _ q: String, slice: Int) -> [String] {
        var out: [String] = [], after: IDSearchIndex.Mark?
        while true {
            let entries = table.searchEntries(withPrefix: q, after: after, max: slice).map(table.searchMark)
            for e in entries where !(e.isBooking && IDSearchIndex.matches(e.activityID.string, q)) { out.append(e.activityID.string) }
            after = entries.last
            if entries.count < slice { return out }
        }
    }

    @Test func indexAgreesWithAFullScan() {
        var table = ActivityTable()
        var reference: [String: ActivityRecord] = [:]
        var g: UInt64 = 7
        func next(_ bound: Int) -> Int {
            g = g &* 6364136223846793005 &+ 1442695040888963407
            return Int((g >> 33) % UInt64(bound))
        }
        // UUIDs in either case (`CompactID` keeps them as bytes), searched by any prefix.
        func uuid(_ n: Int, upper: Bool) -> String {
            String(format: upper ? "%08X-0000-4000-8000-%012X" : "%08x-0000-4000-8000-%012x", n * 7919, n)
        }
        let queries = ["", "a", "A1", "ride-1", "bk-", "bk-1", "bk-12", "x", "ÉTÉ", "été-3", "ride-10", "ride-1000", "zz",
                       "0", "00000", "0000e", uuid(1005, upper: false), uuid(1011, upper: true), uuid(13, upper: false)]
        for step in 0..<6000 {
            let n = next(1500)
            // Mixed case and a few non-ASCII ids: any case matches, by bytes of the lowercased id.
            let id = ["ride-\(n)", "Ride-\(n)X", "a\(n)", "ÉTÉ-\(n)", uuid(n, upper: true), uuid(n, upper: false)][n % 6]
            switch next(5) {
            case 0:
                table[id] = nil; reference[id] = nil
            default:
                let booking: String? = next(4) == 0 ? nil : ["BK-\(next(300))", "bk-\(next(30))", "ÉTÉ-\(next(9))", uuid(next(300), upper: true)][next(4)]
                let r = ActivityRecord(activityID: id, bookingID: booking, attributesType: "T", startedAt: Double(step))
                table[id] = r; reference[id] = r
            }
            if step % 1000 == 999 {
                #expect(table.searchIndex.count == reference.values.reduce(0) { $0 + ($1.bookingID == nil ? 1 : 2) })
                let all = table.searchMarks
                #expect(zip(all, all.dropFirst()).allSatisfy { IDSearchIndex.less($0, $1) }, "entries out of order")
                for q in queries {
                    let lowered = q.lowercased()
                    let expected = reference.values.filter { Self.matches($0, lowered) }.map(\.activityID).sorted()
                    for slice in [1, 3, 256] {
                        let got = Self.found(table, lowered, slice: slice)
                        #expect(got.sorted() == expected, "q=\(q) slice \(slice)")
                    }
                }
            }
        }
    }

    @Test func exactAndPrefixAnyCaseOnBothIds() {
        var table = ActivityTable()
        table["Ride-42"] = ActivityRecord(activityID: "Ride-42", bookingID: "BK-2077", attributesType: "T", startedAt: 1)
        table["ride-421"] = ActivityRecord(activityID: "ride-421", bookingID: "bk-3", attributesType: "T", startedAt: 2)
        #expect(Self.found(table, "ride-42", slice: 10).sorted() == ["Ride-42", "ride-421"])
        #expect(Self.found(table, "ride-421", slice: 10) == ["ride-421"])
        #expect(Self.found(table, "bk-20", slice: 10) == ["Ride-42"])
        #expect(Self.found(table, "bk-2077", slice: 10) == ["Ride-42"])
        #expect(Self.found(table, "2077", slice: 10).isEmpty, "a substring that is no prefix matches nothing")
        // A booking change moves its entry; a removal takes both.
        table["Ride-42"] = ActivityRecord(activityID: "Ride-42", bookingID: "BK-9", attributesType: "T", startedAt: 1)
        #expect(Self.found(table, "bk-2077", slice: 10).isEmpty)
        #expect(Self.found(table, "bk-9", slice: 10) == ["Ride-42"])
        table["Ride-42"] = nil
        #expect(Self.found(table, "r", slice: 10) == ["ride-421"])
        #expect(table.searchIndex.count == 2)
    }
}
