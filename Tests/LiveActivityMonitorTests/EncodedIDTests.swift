import Foundation
import JSON
import Testing
@testable import LiveActivityMonitor

/// Ids are free text up to 128 bytes: whatever is accepted at ingest can be read back at
/// `/api/activities/{id}` and `/api/bookings/{id}` once percent-encoded, as the dashboard does
/// with `encodeURIComponent` (an encoded "/" stays inside the id).
@Suite struct EncodedIDTests {
    /// (activity id, booking id) pairs with characters that are reserved or unsafe in a path.
    static let ids: [(String, String)] = [
        ("act/7", "2026/1042"),
        ("100%", "50%25off"),
        ("what?now", "q?x=1&y=2"),
        ("tag#1", "#frag"),
        ("with space", "a b+c"),
        ("caf\u{E9}-\u{1F695}", "\u{4E88}\u{7D04}/\u{D1}"),
        ("a/../b", "../../etc/passwd"),
        ("/", "//"),
        ("..", "%2F"),
    ]

    /// What `encodeURIComponent` leaves as is; everything else is encoded as UTF-8 bytes.
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()")

    static func encoded(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: unreserved)!
    }

    @Test func idsWithReservedCharactersAreReadBack() throws {
        let server = try TestServer()
        defer { server.stop() }
        let events = Self.ids.map { activity, booking in
            JSONValue([
                "type": "activity.started", "activity_id": activity, "booking_id": booking,
                "attributes_type": "T", "occurred_at": TestServer.base - 60, "content_state": [:] as [String: Any],
            ] as [String: Any])
        }
        #expect(try server.post(events: events).text == #"{"accepted":\#(Self.ids.count),"duplicates":0}"#)

        for (activity, booking) in Self.ids {
            let one = try server.get("/api/activities/" + Self.encoded(activity))
            #expect(one.status == 200, "activity \(activity): \(one.text)")
            let record = try JSONParser.parse(one.body)
            #expect(record["activity_id"]?.stringValue == activity)
            #expect(record["booking_id"]?.stringValue == booking)
            #expect(record["events"]?[0]?["type"]?.stringValue == "activity.started")

            let timeline = try server.get("/api/bookings/" + Self.encoded(booking))
            #expect(timeline.status == 200, "booking \(booking): \(timeline.text)")
            let body = try JSONParser.parse(timeline.body)
            #expect(body["booking_id"]?.stringValue == booking)
            #expect(body["activities"]?.arrayValue?.map { $0["activity_id"]?.stringValue } == [activity])
        }
        // Counted under the route templates, never the ids.
        let n = Double(Self.ids.count)
        #expect(try server.metric(#"liveactivity_http_requests_total{code="200",handler="/api/activities/{activity_id}"}"#) == n)
        #expect(try server.metric(#"liveactivity_http_requests_total{code="200",handler="/api/bookings/{booking_id}"}"#) == n)
    }

    /// The id is decoded exactly once: the encoding of another stored id does not find it.
    @Test func idsAreDecodedOnce() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [IngestTests.started("a/b")]).status == 200)
        #expect(try server.get("/api/activities/a%2Fb").status == 200)
        #expect(try server.get("/api/activities/a%252Fb").status == 404)
        #expect(try server.get("/api/activities/a/b").status == 404, "a raw slash separates segments")
        #expect(try server.get("/api/bookings/BK-a%2Fb").status == 200)
    }

    /// A path that is not valid percent-encoded UTF-8 names nothing: a 404 in JSON, never a
    /// crash, a 500, or an id cut short at a decoded NUL.
    @Test(arguments: ["/api/activities/a%00b", "/api/activities/a%00", "/api/activities/%zz", "/api/activities/100%",
                      "/api/bookings/%E2%82", "/api/bookings/%FF", "/api/bookings/BK-a%2", "/v1/events%00"])
    func undecodablePathsAre404(_ path: String) throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [IngestTests.started("a")]).status == 200)
        let r = try server.get(path)
        #expect(r.status == 404, "\(path): \(r.text)")
        #expect(r.headers["content-type"] == "application/json")
        #expect((try? JSONParser.parse(r.body))?["error"] != nil, "\(path): \(r.text)")
        #expect(try server.get("/-/healthy").status == 200)
    }
}
