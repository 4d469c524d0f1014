import Foundation
import Testing
@testable import LiveActivityReporter

struct EventBufferTests {
    static func entry(_ id: String, bytes: Int = 10, kind: String = "activity.updated") -> EventBuffer.Entry {
        EventBuffer.Entry(id: id, kind: kind, body: Data(repeating: 0x20, count: bytes))
    }

    /// A full buffer gives up updates and push results before a start, an end or a dismissal.
    @Test func startsEndsAndDismissalsAreDroppedLast() {
        var buffer = EventBuffer(maxEvents: 3, maxBytes: 1000)
        var dropped: [String] = []
        dropped += buffer.append(Self.entry("start", kind: "activity.started")).map(\.id)
        for i in 0..<3 { dropped += buffer.append(Self.entry("u\(i)")).map(\.id) }
        dropped += buffer.append(Self.entry("push", kind: "push.sent")).map(\.id)
        dropped += buffer.append(Self.entry("end", kind: "activity.ended")).map(\.id)
        #expect(dropped == ["u0", "u1", "u2"])
        #expect(buffer.entries.map(\.id) == ["start", "push", "end"])
        // Only anchors left: the oldest goes.
        dropped += buffer.append(Self.entry("gone", kind: "activity.dismissed")).map(\.id)
        #expect(dropped.last == "push")
        dropped += buffer.append(Self.entry("start2", kind: "activity.started")).map(\.id)
        #expect(dropped.last == "start", "only anchors left: the oldest of them")
        #expect(buffer.entries.map(\.id) == ["end", "gone", "start2"])
    }

    @Test func overTheCountTheOldestGo() {
        var buffer = EventBuffer(maxEvents: 3, maxBytes: 1000)
        var dropped: [String] = []
        for i in 0..<5 { dropped += buffer.append(Self.entry("e\(i)")).map(\.id) }
        #expect(dropped == ["e0", "e1"])
        #expect(buffer.entries.map(\.id) == ["e2", "e3", "e4"])
        #expect(buffer.bytes == 30)
    }

    @Test func overTheBytesTheOldestGo() {
        var buffer = EventBuffer(maxEvents: 100, maxBytes: 250)
        var dropped: [String] = []
        for i in 0..<4 { dropped += buffer.append(Self.entry("e\(i)", bytes: 100)).map(\.id) }
        #expect(dropped == ["e0", "e1"])
        #expect(buffer.bytes == 200)
    }

    @Test func theBatchInFlightIsNeverDropped() {
        var buffer = EventBuffer(maxEvents: 3, maxBytes: 1000)
        for i in 0..<3 { _ = buffer.append(Self.entry("e\(i)")) }
        #expect(buffer.takeBatch(maxEvents: 2, maxBytes: 1000).map(\.id) == ["e0", "e1"])
        #expect(buffer.append(Self.entry("e3")).map(\.id) == ["e2"])
        #expect(buffer.append(Self.entry("e4")).map(\.id) == ["e3"])
        buffer.release()
        #expect(buffer.append(Self.entry("e5")).map(\.id) == ["e0"])
        #expect(buffer.entries.map(\.id) == ["e1", "e4", "e5"])
    }

    @Test func aBatchRespectsBothLimitsButTakesAtLeastOne() {
        var buffer = EventBuffer(maxEvents: 100, maxBytes: 10_000)
        for i in 0..<10 { _ = buffer.append(Self.entry("e\(i)", bytes: 100)) }
        // "[" + 3 × 100 + 2 commas + "]" = 304 bytes.
        #expect(buffer.takeBatch(maxEvents: 5, maxBytes: 304).count == 3)
        buffer.release()
        #expect(buffer.takeBatch(maxEvents: 2, maxBytes: 10_000).count == 2)
        buffer.release()
        #expect(buffer.takeBatch(maxEvents: 5, maxBytes: 10).count == 1)
    }

    @Test func completingRemovesTheAnsweredAndKeepsTheRestFirstInLine() {
        var buffer = EventBuffer(maxEvents: 100, maxBytes: 10_000)
        for i in 0..<6 { _ = buffer.append(Self.entry("e\(i)")) }
        _ = buffer.takeBatch(maxEvents: 4, maxBytes: 10_000)
        buffer.complete(removing: [1, 3])
        #expect(buffer.entries.map(\.id) == ["e0", "e2", "e4", "e5"])
        #expect(buffer.inFlight == 0 && buffer.bytes == 40)
        _ = buffer.takeBatch(maxEvents: 2, maxBytes: 10_000)
        buffer.complete()
        #expect(buffer.entries.map(\.id) == ["e4", "e5"])
    }
}
