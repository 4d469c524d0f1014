import JSON
import Testing
@testable import LiveActivityMonitor

/// The writer splices an inherited `booking_id` into an event's serialised text instead of
/// serialising the document again: the text must be exactly what serialising would give.
@Suite struct InheritedBookingBodyTests {
    @Test(arguments: ["BK-1042", "b\"</script>\u{2028}é", ""])
    func splicedTextEqualsSerialisedDocument(booking: String) throws {
        let documents: [JSONObject] = [
            ["type": "push.sent", "activity_id": "A1", "content_state": ["progress": 0.4]],
            ["type": "activity.stale", "activity_id": "A1", "booking_id": .null],
            [:],
        ]
        for original in documents {
            var document = original
            let spliced = EventStore.body(JSONValue.object(original).jsonString, inheriting: booking, document: &document)
            var expected = original
            expected["booking_id"] = .string(booking)
            #expect(document == expected)
            #expect(spliced == JSONValue.object(expected).jsonString)
        }
    }
}
