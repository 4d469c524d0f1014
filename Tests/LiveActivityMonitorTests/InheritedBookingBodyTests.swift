import JSON
import Testing
@testable import LiveActivityMonitor

/// The writer splices an inherited `booking_id` into an event's stored text instead of
/// serialising the event again: the text must be exactly what serialising would give.
@Suite struct InheritedBookingBodyTests {
    /// `EventValidator.storedBody` of `object`, with `values` as the fields' checked values.
    static func storedBody(_ object: JSONObject, _ values: [EventField: CheckedValue] = [:]) -> String {
        withUnsafeTemporaryAllocation(of: CheckedValue.self, capacity: EventField.allCases.count) { storage in
            storage.initialize(repeating: .absent)
            defer { storage.deinitialize() }
            for (field, value) in values { storage[Int(field.rawValue)] = value }
            return EventValidator.storedBody(object.entries, ReadFields(values: storage))
        }
    }

    @Test(arguments: ["BK-1042", "b\"</script>\u{2028}é", "", "a\\b", "tab\there", "x&y", "x>y", "\u{2029}", "é€", "\u{1}"])
    func splicedTextEqualsSerialisedDocument(booking: String) throws {
        let documents: [JSONObject] = [
            ["type": "push.sent", "activity_id": "A1", "content_state": ["progress": 0.4]],
            ["type": "activity.stale", "activity_id": "A1", "booking_id": .null],
            [:],
        ]
        for original in documents {
            let stored = Self.storedBody(original)
            var expected = original
            expected["booking_id"] = nil
            expected["booking_id"] = .string(booking)
            #expect(EventStore.body(stored, inheriting: booking) == JSONValue.object(expected).jsonString)
        }
    }

    @Test func storedBodySwapsTheTokenAndFormatsDates() throws {
        let object: JSONObject = ["type": "push.sent", "occurred_at": 1_795_000_000, "push_token": "abcd", "booking_id": .null]
        #expect(Self.storedBody(object, [.pushToken: .fingerprint("0123456789abcdef"), .occurredAt: .number(1_795_000_000)])
            == #"{"type":"push.sent","occurred_at":"2026-11-18T11:06:40Z","token_fingerprint":"0123456789abcdef"}"#)
    }

    /// Through the validator: every date field, number or text, is stored as RFC 3339 UTC.
    @Test func validatedEventsStoreEveryDateAsRFC3339() throws {
        let text = #"{"type":"push.sent","activity_id":"A1","occurred_at":1795000000.25,"event":"end","status":200,"#
            + #""latency_ms":3,"push_token":"00112233445566778899aabbccddeeff","timestamp":"2026-11-18T12:06:40+01:00","stale_date":1795003600,"#
            + #""dismissal_date":"2026-11-18T13:06:40Z","content_state":{"b":[1,2.50,"<x>"],"a":null}}"#
        let event = try #require(try IngestDecoder().decode(Array(text.utf8), format: .json).first)
        let body = try #require(try JSONParser.parse(event.body).objectValue)
        #expect(body["occurred_at"] == .string("2026-11-18T11:06:40.250Z"))
        #expect(body["timestamp"] == .string("2026-11-18T11:06:40Z"))
        #expect(body["stale_date"] == .string("2026-11-18T12:06:40Z"))
        #expect(body["dismissal_date"] == .string("2026-11-18T13:06:40Z"))
        // The content object is stored as the validator wrote it, key order and literals kept.
        #expect(event.body.contains(#""content_state":{"b":[1,2.50,"\u003cx\u003e"],"a":null}"#), "\(event.body)")
    }
}
