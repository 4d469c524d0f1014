import Synchronization
import Testing
@testable import LiveActivityMonitor

/// A commit keeps each activity it reads in one slot, claimed in the same lookup that finds it
/// (`CommitChanges.slot`). A read that fails (a database error) claims nothing: the commit fails
/// anyway, but the changes must not name a slot that was never filled.
@Suite struct CommitSlotTests {
    struct ReadFailed: Error {}

    @Test func aFailedReadLeavesNoSlotBehind() throws {
        let stored = [ActivityRecord(activityID: "a1", bookingID: "b1", attributesType: "T", startedAt: 100),
                      ActivityRecord(activityID: "a2", bookingID: "b2", attributesType: "T", startedAt: 100)]
        let reads = Mutex(0)
        var changes = CommitChanges(counters: MonitorCounters(), labels: AttributesTypeLabels(), shapes: .recorded,
                                    starts: PushToStartBook(), channels: ChannelBook(), settings: EngineSettings(),
                                    load: { id in
                                        if reads.withLock({ $0 += 1; return $0 }) == 1 { throw ReadFailed() }
                                        return stored.first { $0.activityID == id }
                                    })
        #expect(throws: ReadFailed.self) { try changes.record("a1") }
        // Another activity takes the next slot; the first, read again, is its own, not that one.
        #expect(try changes.bookingID(of: "a2") == "b2")
        #expect(try changes.bookingID(of: "a1") == "b1")
        #expect(try changes.record("a2")?.bookingID == "b2")
        #expect(try changes.record("a3") == nil)
        #expect(reads.withLock { $0 } == 4)
    }
}
