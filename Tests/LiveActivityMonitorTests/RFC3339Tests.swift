import Foundation
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

@Suite struct RFC3339Tests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00Z"),
        (1.5, "1970-01-01T00:00:01.500Z"),
        (-0.001, "1969-12-31T23:59:59.999Z"),
        (951_782_400, "2000-02-29T00:00:00Z"),
        (1_795_954_980.25, "2026-11-29T12:23:00.250Z"),
        (253_402_300_799.999, "9999-12-31T23:59:59.999Z"),
        (253_402_300_800, "10000-01-01T00:00:00Z"),
    ])
    func formatsUTCWithMillisecondsOnlyWhenThereAreAny(_ seconds: Double, _ text: String) {
        #expect(RFC3339.format(seconds) == text)
    }

    /// Against Foundation's formatter, over the dates the validator takes (2000–2100).
    @Test func formatAgreesWithFoundationAndParsesBack() throws {
        let reference = ISO8601DateFormatter()
        reference.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        reference.timeZone = TimeZone(identifier: "UTC")
        for seconds in stride(from: 946_684_800.0, to: 4_102_444_800, by: 86_400 * 37 + 3_661.125) {
            let text = RFC3339.format(seconds)
            let expected = reference.string(from: Date(timeIntervalSince1970: seconds))
            let wholeSecond = seconds == seconds.rounded(.down)
            #expect(text == (wholeSecond ? String(expected.prefix(19)) + "Z" : expected), "\(seconds)")
            let back = try #require(RFC3339.parse(text), "\(text)")
            #expect(abs(back - seconds) < 0.0005, "\(text)")
        }
    }
}
