import Glibc
import Prometheus
import Testing
@testable import LiveActivityMonitor

/// What the push-to-start book costs per device (docs/ARCHITECTURE.md, "What one record
/// costs"): one current token per device and type, and every token a newer one replaced,
/// kept for good. Counted by the allocator like `RecordCostTests`.
@Suite(.serialized) struct PushToStartCostTests {
    static let devices = 20_000

    /// The type as each event brings it: a String of its own, as decoding makes one.
    static func freshType() -> String { String(decoding: Array("LiveActivityAttributes".utf8), as: UTF8.self) }

    static func book() -> PushToStartBook {
        var book = PushToStartBook()
        for i in 0..<devices {
            let key = PushToStartBook.DeviceType(deviceID: ExactString("device-\(i)-5f0c6b1e"),
                                                 attributesType: ExactString(freshType()))
            book.setToken(.init(fingerprint: TokenFingerprint.of("a\(i)"), at: Double(i)), for: key)
        }
        return book
    }

    @Test func aDeviceCostsItsIDAndEightBytesOfToken() {
        let before = RecordCostTests.allocated()
        var book = Self.book()
        let withTokens = RecordCostTests.allocated()
        for i in 0..<Self.devices { book.supersede(TokenFingerprint.of("b\(i)")) }
        let withSuperseded = RecordCostTests.allocated()
        print("push-to-start book, bytes per device: current token \((withTokens - before) / Self.devices), "
              + "superseded token \((withSuperseded - withTokens) / Self.devices)")

        // Every key shares one copy of the type, whatever String each event brought.
        var types = Set<UInt>()
        for key in book.tokens.keys {
            var text = key.attributesType.text
            types.insert(text.withUTF8 { UInt(bitPattern: $0.baseAddress) })
        }
        #expect(types.count == 1)
        // Fingerprints kept as their 8 bytes, read back as the text they came as.
        for (_, token) in book.tokens.prefix(100) {
            guard case .digits = token.stored else { Issue.record("fingerprint kept as text"); return }
        }
        #expect(book.tokens.values.contains { $0.fingerprint == TokenFingerprint.of("a7") })
        #expect(book.isSuperseded(TokenFingerprint.of("b7")) && !book.isSuperseded(TokenFingerprint.of("a7")))
    }
}
