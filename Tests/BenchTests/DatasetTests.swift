import Foundation
import Testing
@testable import live_activity_monitor_bench

@Suite struct DatasetTests {
    static let uuids = Dataset(prefix: "g", now: 1_700_000_000, ids: .uuids)

    /// Activity and booking ids distinct random-looking bare UUIDs in upper case, not in the
    /// order of the activities' numbers (about half of the neighbours reversed), as ActivityKit's;
    /// distinct between the datasets of other prefixes too.
    @Test func activityAndBookingIDsAreDistinctUUIDsOutOfOrder() throws {
        let n = 20_000
        var all = Set<String>()
        for data in [Self.uuids, Dataset(prefix: "w", now: 1_700_000_000, ids: .uuids), Dataset(prefix: "su", now: 1_700_000_000, ids: .uuids)] {
            for ids in [(0..<n).map(data.activityID), (0..<n).map(data.bookingID)] {
                #expect(Set(ids).count == n)
                #expect(ids.allSatisfy { UUID(uuidString: $0)?.uuidString == $0 })
                let reversed = zip(ids, ids.dropFirst()).filter { $0 > $1 }.count
                #expect((n * 4 / 10...n * 6 / 10).contains(reversed))
                all.formUnion(ids)
            }
        }
        #expect(all.count == 6 * n)
    }

    /// Event ids version 7 UUIDs, distinct, each later line's after the earlier ones' in key
    /// order (as `LiveActivityReporter`'s).
    @Test func eventIDsAreTimeOrderedVersion7UUIDs() throws {
        let events = (0..<2_000).flatMap { i in [Self.uuids.startEventID(i)] + (1...9).map { Self.uuids.pushEventID(i, $0) } }
        #expect(Set(events).count == events.count)
        #expect(events == events.sorted())
        for id in events.prefix(50) {
            let uuid = try #require(UUID(uuidString: String(id.dropFirst())))
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 7 && bytes[8] >> 6 == 0b10)
        }
    }

    /// The lines name the ids the accessors give, and numbered ids are the old ones.
    @Test func linesCarryTheDatasetsIDs() throws {
        let line = try #require(Self.uuids.activity(7, pushes: 1, age: 60).last)
        let push = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(push?["id"] as? String == Self.uuids.pushEventID(7, 1))
        #expect(push?["activity_id"] as? String == Self.uuids.activityID(7))
        let numbered = Dataset(prefix: "g", now: 1_700_000_000)
        #expect([numbered.activityID(7), numbered.bookingID(7), numbered.startEventID(7), numbered.pushEventID(7, 2)]
                == ["ga7", "gBK7", "gs7", "gp7-2"])
    }
}
