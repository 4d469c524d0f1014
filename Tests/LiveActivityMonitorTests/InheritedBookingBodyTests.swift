import JSON
import Testing
@testable import LiveActivityMonitor

/// The writer splices an inherited `booking_id` into an event's stored text instead of
/// serialising the event again: the text must be exactly what serialising would give.
@Suite struct InheritedBookingBodyTests {
    @Test(arguments: ["BK-1042", "b\"</script>\u{2028}é", "", "a\\b", "tab\there", "x&y", "x>y", "\u{2029}", "é€", "\u{1}"])
    func splicedTextEqualsSerialisedDocument(booking: String) throws {
        let documents: [JSONObject] = [
            ["type": "push.sent", "activity_id": "A1", "content_state": ["progress": 0.4]],
            ["type": "activity.stale", "activity_id": "A1", "booking_id": .null],
            [:],
        ]
        for original in documents {
            let stored = EventValidator.storedBody(original, fingerprint: nil)
            var expected = original
            expected["booking_id"] = nil
            expected["booking_id"] = .string(booking)
            #expect(EventStore.body(stored, inheriting: booking) == JSONValue.object(expected).jsonString)
        }
    }

    @Test func storedBodySwapsTheTokenAndFormatsDates() throws {
        let object: JSONObject = ["type": "push.sent", "occurred_at": 1_795_000_000, "push_token": "abcd", "booking_id": .null]
        #expect(EventValidator.storedBody(object, fingerprint: "0123456789abcdef")
            == #"{"type":"push.sent","occurred_at":"2026-11-18T11:06:40Z","token_fingerprint":"0123456789abcdef"}"#)
    }
}
