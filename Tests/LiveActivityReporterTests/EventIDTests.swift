import Foundation
import Testing
@testable import LiveActivityReporter

/// `LiveActivityEvent.newID()`: version 7 UUIDs (RFC 9562), so that the monitor files each new
/// event id beside the last ones in its index.
struct EventIDTests {
    /// The time in the first 48 bits, the version and variant set, the rest random.
    @Test func newIDIsAVersion7UUIDOfTheTime() throws {
        let at = Date(timeIntervalSince1970: 1_764_979_200.123)
        let id = LiveActivityEvent.newID(at: at)
        let uuid = try #require(UUID(uuidString: id))
        #expect(id == id.lowercased())
        let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        let milliseconds = bytes[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(milliseconds == 1_764_979_200_123)
        #expect(bytes[6] >> 4 == 7)
        #expect(bytes[8] >> 6 == 0b10)
        #expect(LiveActivityEvent.newID(at: at) != id)
    }

    /// Later ids sort after earlier ones as text (the index's order), and ids made in the same
    /// millisecond are distinct.
    @Test func idsSortByTimeAndNeverRepeat() {
        let start = Date(timeIntervalSince1970: 1_764_979_200)
        let ids = (0..<1_000).map { LiveActivityEvent.newID(at: start.addingTimeInterval(Double($0) / 1000 * 7)) }
        #expect(ids == ids.sorted())
        let same = (0..<10_000).map { _ in LiveActivityEvent.newID(at: start) }
        #expect(Set(same).count == same.count)
    }

    /// An event made without an id gets one of these.
    @Test func eventsGetTimeOrderedIDs() throws {
        let event = LiveActivityEvent.updated(activityID: "A", ActivityUpdated(contentState: [:]))
        let bytes = withUnsafeBytes(of: try #require(UUID(uuidString: event.id)).uuid) { Array($0) }
        #expect(bytes[6] >> 4 == 7)
    }
}
