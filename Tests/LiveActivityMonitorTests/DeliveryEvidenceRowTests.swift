import Foundation
import Testing
@testable import LiveActivityMonitor

/// The `activities.delivery` column: a fixed-size binary form, and the JSON text rows written
/// before it still read.
struct DeliveryEvidenceRowTests {
    static func evidence() -> DeliveryEvidence {
        var e = DeliveryEvidence()
        e.remember(digest: 0xdead_beef_0123_4567, timestamp: 1_795_000_000.125, push: (seq: 42, sentAt: 1_795_000_001.5))
        e.remember(digest: .max, timestamp: 1.8e12, push: nil)
        e.lastConfirmedAt = 1_795_000_009.25
        e.missed = 3
        return e
    }

    @Test func theBinaryFormRoundTrips() throws {
        let e = Self.evidence()
        let bytes = try #require(e.stored)
        #expect(bytes.first == 1)
        #expect(bytes.count == 18 + 32 * 2)
        #expect(DeliveryEvidence(stored: bytes) == e)
        #expect(DeliveryEvidence().stored == nil, "empty evidence is a null column")
        #expect(DeliveryEvidence(stored: Array(bytes.dropLast(5))).known.count == 1, "a cut row keeps what reads")
    }

    @Test func aRowInTheFirstFormStillReads() {
        let text = """
            {"confirmed_at":1795000009.25,"missed":3,"known":[{"digest":"deadbeef01234567","timestamp":1795000000.125,\
            "push":42,"sent_at":1795000001.5},{"digest":"ffffffffffffffff","timestamp":1800000000000,"push":null,"sent_at":null}]}
            """
        #expect(DeliveryEvidence(stored: Array(text.utf8)) == Self.evidence())
    }
}
