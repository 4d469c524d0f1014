import Foundation
import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// DESIGN.md section 3 over real HTTP: every bad-input class gets its status and a message a
/// client can act on, stores nothing, and leaves the server serving.
@Suite struct IngestTests {
    static let token = String(repeating: "ab", count: 32)

    static func started(_ id: String, eventID: String? = nil, at: Double = TestServer.base - 60) -> JSONValue {
        var o: [String: Any] = [
            "type": "activity.started", "activity_id": id, "booking_id": "BK-\(id)",
            "attributes_type": "TimerWidgetAttributes", "occurred_at": at,
            "content_state": ["startedAt": at], "push_token": token,
        ]
        if let eventID { o["id"] = eventID }
        return JSONValue(o)
    }

    /// Asserts that nothing was stored: no event counted, no activity listed.
    static func expectNothingStored(_ server: TestServer) throws {
        let text = try server.get("/metrics").text
        for type in EventType.allCases {
            #expect(MetricsText.value(of: "liveactivity_ingest_events_total{type=\"\(type.rawValue)\"}", in: text) == 0)
        }
        #expect(try server.json("/api/activities")["activities"] == .array([]))
    }

    @Test func acceptsObjectArrayAndNDJSON() throws {
        let server = try TestServer()
        defer { server.stop() }
        var r = try server.post(Self.started("a").jsonString)
        #expect(r.status == 200)
        #expect(r.text == #"{"accepted":1,"duplicates":0}"#)
        r = try server.post(events: [Self.started("b"), Self.started("c")])
        #expect(r.text == #"{"accepted":2,"duplicates":0}"#)
        let ndjson = Self.started("d").jsonString + "\n\n" + Self.started("e").jsonString + "\n"
        r = try server.post(ndjson, contentType: "application/x-ndjson")
        #expect(r.text == #"{"accepted":2,"duplicates":0}"#)
        r = try server.post(Self.started("f").jsonString, contentType: "application/json; charset=utf-8")
        #expect(r.status == 200)
        #expect(try server.json("/api/activities")["counts"]?["active"] == JSONValue(6))
    }

    @Test(arguments: [
        ("application/json", IngestDecoder.Format.json), ("Application/JSON; charset=utf-8", .json),
        (" \tapplication/json \t;q=1", .json), ("application/x-ndjson", .ndjson),
        ("APPLICATION/NDJSON;x=y", .ndjson), ("application/jsonl", .ndjson),
        ("application/json; charset=\"UTF-8\"", .json), ("application/x-ndjson;x=y; Charset = utf-8 ", .ndjson),
    ] as [(String, IngestDecoder.Format)])
    func contentTypesTaken(_ header: String, _ format: IngestDecoder.Format) {
        #expect(IngestDecoder.format(contentType: header) == format)
    }

    @Test(arguments: [nil, "", ";", "text/plain", "application/js", "application/jsonx", "application/json-seq",
                      "application /json", "applicatİon/json", "application/json\u{0}",
                      // JSON is UTF-8: a body declared in another charset is not read as it.
                      "application/json; charset=latin1", "application/x-ndjson; x=y; charset=utf-16", "application/json;charset="]
                      as [String?])
    func contentTypesRefused(_ header: String?) {
        #expect(IngestDecoder.format(contentType: header) == nil)
    }

    @Test func repeatedIDIsADuplicateCountedOnce() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.started("a", eventID: "e1")]).text == #"{"accepted":1,"duplicates":0}"#)
        #expect(try server.post(events: [Self.started("a", eventID: "e1"), Self.started("a", eventID: "e1")]).text
                == #"{"accepted":0,"duplicates":2}"#)
        #expect(try server.metric("liveactivity_ingest_duplicates_total") == 2)
        #expect(try server.metric("liveactivity_activities_started_total{attributes_type=\"TimerWidgetAttributes\",source=\"app\"}") == 1)
        #expect(try server.metric("liveactivity_ingest_events_total{type=\"activity.started\"}") == 1)
    }

    struct BadInput: Sendable, CustomTestStringConvertible {
        let name: String
        let body: String
        var contentType = "application/json"
        let status: Int
        let message: String
        var testDescription: String { name }
    }

    static let badInputs: [BadInput] = [
        BadInput(name: "not JSON", body: "{\"type\": ", status: 400, message: "not valid JSON"),
        BadInput(name: "NDJSON line broken", body: started("a").jsonString + "\n{nope}\n",
                 contentType: "application/x-ndjson", status: 400, message: "line 2"),
        BadInput(name: "empty batch", body: "[]", status: 400, message: "no events"),
        BadInput(name: "raw control character", body: "{\"type\":\"activity.started\",\"activity_id\":\"a\u{1}\"}",
                 status: 400, message: "JSON"),
        BadInput(name: "deep nesting", body: String(repeating: "[", count: 100_000), status: 400, message: "nesting"),
        BadInput(name: "wrong content type", body: "{}", contentType: "text/plain", status: 415,
                 message: "application/json or application/x-ndjson, in UTF-8, not text/plain"),
        BadInput(name: "empty content type", body: "{}", contentType: "", status: 415, message: "in UTF-8: the request has none"),
        BadInput(name: "too many events", body: "[" + Array(repeating: "{}", count: 1001).joined(separator: ",") + "]",
                 status: 413, message: "at most 1000"),
    ]

    @Test(arguments: badInputs)
    func badInputIsRefusedAndNothingStored(_ input: BadInput) throws {
        let server = try TestServer()
        defer { server.stop() }
        let r = try server.post(input.body, contentType: input.contentType)
        #expect(r.status == input.status, "\(input.name): \(r.text)")
        #expect(r.text.contains(input.message), "\(input.name): \(r.text)")
        #expect(r.headers["content-type"] == "application/json")
        try Self.expectNothingStored(server)
        #expect(try server.get("/-/healthy").status == 200)
    }

    @Test func bodyOverTheLimitIs413() throws {
        let server = try TestServer { $0.maxBodyBytes = 4096 }
        defer { server.stop() }
        let big = "[" + Array(repeating: Self.started("a").jsonString, count: 40).joined(separator: ",") + "]"
        let r = try server.post(big)
        #expect(r.status == 413)
        #expect(r.text.contains("4096"))
        try Self.expectNothingStored(server)
    }

    /// A chunked body has no length to refuse up front: one slightly over the default 1 MiB is
    /// read to its end and answered 413 like a declared one, and counted as a refused ingest.
    @Test func chunkedBodyOverTheLimitIs413AndCounted() throws {
        let server = try TestServer()
        defer { server.stop() }
        let event = JSONValue([
            "type": "activity.started", "activity_id": "a", "booking_id": "BK-a",
            "attributes_type": "TimerWidgetAttributes", "occurred_at": TestServer.base - 60,
            "content_state": [:] as [String: Any], "app": String(repeating: "x", count: 1_100_000),
        ] as [String: Any])
        let body = Array(event.jsonString.utf8)
        let c = try RawConnection(port: server.server.port)
        try c.send("POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        for start in stride(from: 0, to: body.count, by: 65_536) {
            let piece = body[start..<min(start + 65_536, body.count)]
            try c.send(Array((String(piece.count, radix: 16) + "\r\n").utf8) + piece + Array("\r\n".utf8))
        }
        try c.send("0\r\n\r\n")
        let r = try #require(c.readResponse(seconds: 5), "no answer to a chunked body over the limit")
        #expect(r.status == 413)
        #expect(r.text == #"{"error":"request body exceeds 1048576 bytes"}"#)
        #expect(r.headers["content-type"] == "application/json")
        for name in SecurityTests.requiredHeaders { #expect(r.headers[name] != nil, "chunked 413 lacks \(name)") }
        try Self.expectNothingStored(server)
        #expect(try server.metric(#"liveactivity_ingest_rejected_total{reason="too_large"}"#) == 1)
        #expect(try server.metric(#"liveactivity_http_requests_total{code="413",handler="/v1/events"}"#) == 1)
    }

    @Test func invalidEventsAreAllNamedAndNoneStored() throws {
        let server = try TestServer()
        defer { server.stop() }
        let events: [JSONValue] = [
            Self.started("ok"),
            JSONValue(["type": "activity.started", "activity_id": "x", "occurred_at": "yesterday"] as [String: Any]),
            JSONValue(["type": "push.sent", "activity_id": "y", "occurred_at": TestServer.base, "event": "update",
                       "status": 200, "latency_ms": -1, "push_token": "zz", "priority": 7] as [String: Any]),
            JSONValue(["type": "activity.teleported", "occurred_at": TestServer.base] as [String: Any]),
            JSONValue("just a string"),
            JSONValue(["type": "activity.updated", "activity_id": "z", "occurred_at": "9999-01-01T00:00:00Z",
                       "contentState": [:] as [String: Any]] as [String: Any]),
        ]
        let r = try server.post(events: events)
        #expect(r.status == 422)
        let errors = try JSONParser.parse(r.body)["errors"]?.arrayValue ?? []
        func has(_ index: Int, _ field: String, _ fragment: String) -> Bool {
            errors.contains { $0["index"] == JSONValue(index) && $0["field"]?.stringValue == field
                && ($0["error"]?.stringValue ?? "").contains(fragment) }
        }
        #expect(!errors.contains { $0["index"] == JSONValue(0) }, "the valid event is not blamed")
        #expect(has(1, "occurred_at", "RFC 3339"))
        #expect(has(1, "booking_id", "required"))
        #expect(has(1, "attributes_type", "required"))
        #expect(has(1, "content_state", "required"))
        #expect(has(2, "latency_ms", "range"))
        #expect(has(2, "push_token", "hex"))
        #expect(has(2, "priority", "5 or 10"))
        #expect(has(3, "type", "unknown type"))
        #expect(has(4, "", "JSON object"))
        #expect(has(5, "occurred_at", "2100"))
        #expect(has(5, "contentState", "unknown field"))
        #expect(has(5, "content_state", "required"))
        try Self.expectNothingStored(server)
        #expect(try server.metric("liveactivity_ingest_rejected_total{reason=\"invalid\"}") == 1)
    }

    @Test func ingestTokenIsRequiredWhenConfigured() throws {
        let server = try TestServer { $0.ingestToken = "ingest-secret-0123456789" }
        defer { server.stop() }
        let body = Self.started("a").jsonString
        var r = try server.post(body)
        #expect(r.status == 401)
        #expect(r.text == #"{"error":"unauthorized"}"#)
        #expect(r.headers["www-authenticate"] == "Bearer")
        r = try server.post(body, token: "ingest-secret-0123456788")
        #expect(r.status == 401)
        try Self.expectNothingStored(server)
        r = try server.post(body, token: "ingest-secret-0123456789")
        #expect(r.status == 200)
    }

    @Test func rawTokenIsNeverStored() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.started("a")]).status == 200)
        let activity = try server.json("/api/activities/a")
        #expect(activity["token"]?["fingerprint"]?.stringValue == TokenFingerprint.of(Self.token))
        #expect(activity["events"]?[0]?["token_fingerprint"] != nil)
        server.stop(keepFiles: true)
        for file in try FileManager.default.contentsOfDirectory(atPath: server.directory) {
            let data = FileManager.default.contents(atPath: server.directory + "/" + file) ?? Data()
            #expect(data.range(of: Data(Self.token.utf8)) == nil, "raw token found in \(file)")
        }
        try? FileManager.default.removeItem(atPath: server.directory)
    }

    @Test func everyResponseCarriesSecurityHeaders() throws {
        let server = try TestServer()
        defer { server.stop() }
        for path in ["/metrics", "/-/healthy", "/api/activities", "/nope", "/api/activities/none"] {
            let r = try server.get(path)
            #expect(r.headers["content-security-policy"]?.contains("default-src 'self'") == true, "\(path)")
            #expect(r.headers["x-content-type-options"] == "nosniff", "\(path)")
        }
    }
}

extension JSONValue {
    subscript(index: Int) -> JSONValue? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }
}

@Suite struct IngestEncodingTests {
    @Test func invalidUTF8IsRefused() throws {
        let server = try TestServer()
        defer { server.stop() }
        let body = Array(#"{"type":"activity.started","activity_id":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8)
        let r = try server.client.request("POST", "/v1/events", headers: [("Content-Type", "application/json")], body: body)
        #expect(r.status == 400)
        #expect(r.text.contains("UTF-8"), "\(r.text)")
        try IngestTests.expectNothingStored(server)
    }
}

@Suite struct ReadAPITests {
    @Test func lastPushIsTheLatestSentNotTheLatestReported() throws {
        let server = try TestServer()
        defer { server.stop() }
        let t = TestServer.base
        _ = try server.post(events: [IngestTests.started("a", at: t - 600)])
        _ = try server.post(events: [Scenario.push("a", "p2", at: t - 100, status: 410, reason: "Unregistered", token: IngestTests.token)])
        _ = try server.post(events: [Scenario.push("a", "p1", at: t - 300, token: IngestTests.token)])
        let push = try server.json("/api/activities/a")["last_push"]
        #expect(push?["status"] == JSONValue(410))
        #expect(push?["reason"]?.stringValue == "Unregistered")
    }

    @Test func dismissedListingStillCountsVisibleStates() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.post(events: [IngestTests.started("live"), IngestTests.started("gone"),
                                     JSONValue(["type": "activity.dismissed", "activity_id": "gone",
                                                "occurred_at": TestServer.base - 1] as [String: Any])])
        let page = try server.json("/api/activities?state=dismissed")
        #expect(page["activities"]?[0]?["activity_id"]?.stringValue == "gone")
        #expect(page["counts"]?["active"] == JSONValue(1))
    }

    /// The dashboard draws priority-10 pushes against the budget these responses state: the one
    /// `--priority10-budget` set, which `/metrics` counts heavy activities with.
    @Test func listAndBookingStateTheConfiguredPriority10Budget() throws {
        let server = try TestServer { $0.priority10Budget = 5 }
        defer { server.stop() }
        let t = TestServer.base
        _ = try server.post(events: [IngestTests.started("a", at: t - 600)])
        _ = try server.post(events: (0..<8).map { Scenario.push("a", "p\($0)", at: t - 500 + Double($0) * 10, token: IngestTests.token) })
        #expect(try server.metric("liveactivity_priority10_heavy_activities") == 1)
        let list = try server.json("/api/activities")
        #expect(list["priority10_budget"] == JSONValue(5))
        #expect(list["activities"]?[0]?["priority10_last_hour"] == JSONValue(8))
        #expect(list["counts"]?["active"] == JSONValue(1), "the existing fields stay")
        let booking = try server.json("/api/bookings/BK-a")
        #expect(booking["priority10_budget"] == JSONValue(5))
        #expect(booking["activities"]?[0]?["activity_id"]?.stringValue == "a" && booking["events"]?.arrayValue?.count == 9)
        #expect(try server.json("/api/activities?state=dismissed")["priority10_budget"] == JSONValue(5))

        let defaults = try TestServer()
        defer { defaults.stop() }
        #expect(try defaults.json("/api/activities")["priority10_budget"] == JSONValue(15))
    }

    @Test func unknownIDsAre404AndBadQueriesAre400() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.get("/api/activities/nope").status == 404)
        #expect(try server.get("/api/bookings/nope").status == 404)
        #expect(try server.get("/api/activities?limit=0").status == 400)
        #expect(try server.get("/api/activities?state=sleeping").status == 400)
        // An encoded NUL stays in the value: not read as `state=` (no filter) and answered 200.
        #expect(try server.get("/api/activities?state=%00active").status == 400)
        #expect(try server.get("/api/activities?limit=5%00").status == 400)
        #expect(try server.get("/api/activities?cursor=garbage").status == 400)
        // Longer than any id can be: it could match nothing, and each record would be searched for it.
        #expect(try server.get("/api/activities?q=" + String(repeating: "a", count: 129)).status == 400)
        #expect(try server.get("/api/activities?q=" + String(repeating: "a", count: 128)).status == 200)
    }

    @Test func pagesFollowThePhoneOrder() throws {
        let server = try TestServer()
        defer { server.stop() }
        let events = (0..<5).map { IngestTests.started("a\($0)", at: TestServer.base - 100 + Double($0)) }
        _ = try server.post(events: events)
        var ids: [String] = []
        var cursor: String?
        repeat {
            let page = try server.json("/api/activities?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""))
            ids += page["activities"]?.arrayValue?.compactMap { $0["activity_id"]?.stringValue } ?? []
            cursor = page["next_cursor"]?.stringValue
        } while cursor != nil
        #expect(ids == ["a4", "a3", "a2", "a1", "a0"])
    }

    /// Every id of a listing, following `next_cursor` page by page.
    static func pagedIDs(_ server: TestServer, _ query: String) throws -> [String] {
        var ids: [String] = []
        var cursor: String?
        repeat {
            let page = try server.json("/api/activities?" + query + (cursor.map { "&cursor=\($0)" } ?? ""))
            ids += page["activities"]?.arrayValue?.compactMap { $0["activity_id"]?.stringValue } ?? []
            cursor = page["next_cursor"]?.stringValue
        } while cursor != nil
        return ids
    }

    static func dismissed(_ id: String) -> JSONValue {
        JSONValue(["type": "activity.dismissed", "activity_id": id, "occurred_at": TestServer.base - 1] as [String: Any])
    }

    @Test func dismissedPagesKeepActivitiesThatStartedTogether() throws {
        let server = try TestServer()
        defer { server.stop() }
        // d0…d4 share a start time, e0 started earlier: newest first, ties by id.
        let ids = (0..<5).map { "d\($0)" }
        _ = try server.post(events: ids.map { IngestTests.started($0, at: TestServer.base - 100) }
                            + [IngestTests.started("e0", at: TestServer.base - 200)])
        _ = try server.post(events: (ids + ["e0"]).map(Self.dismissed))
        #expect(try Self.pagedIDs(server, "state=dismissed&limit=2") == ids + ["e0"])
        #expect(try Self.pagedIDs(server, "state=dismissed&limit=1000") == ids + ["e0"])
    }

    @Test func aFilteredDismissedPageReadsOnUntilItIsFull() throws {
        let server = try TestServer()
        defer { server.stop() }
        // The one match started first, behind 30 newer dismissed activities that do not match.
        let others = (0..<30).map { "other\($0)" }
        _ = try server.post(events: [IngestTests.started("needle", at: TestServer.base - 500)]
                            + others.enumerated().map { IngestTests.started($1, at: TestServer.base - 100 + Double($0)) })
        _ = try server.post(events: (others + ["needle"]).map(Self.dismissed))
        let page = try server.json("/api/activities?state=dismissed&q=NEEDLE&limit=1")
        #expect(page["activities"]?[0]?["activity_id"]?.stringValue == "needle")
        #expect(page["next_cursor"] == JSONValue.null)
        #expect(try Self.pagedIDs(server, "state=dismissed&q=other&limit=7").count == 30)
    }
}
