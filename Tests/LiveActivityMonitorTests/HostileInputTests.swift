import Foundation
import HTTPServer
import JSON
import Synchronization
import Testing
@testable import LiveActivityMonitor

/// Hostile bodies on `POST /v1/events`: each gets a clear 4xx with a message naming the
/// problem, nothing is stored, the server keeps serving, and memory stays bounded.
@Suite struct HostileInputTests {
    struct Hostile: Sendable, CustomTestStringConvertible {
        let name: String
        let body: [UInt8]
        var contentType = "application/json"
        let status: Int
        /// A fragment the response must contain.
        let message: String
        var testDescription: String { name }
    }

    /// A valid `push.sent` with `overrides` merged in: the only thing wrong is the override.
    static func push(_ overrides: String) -> String {
        #"{"type":"push.sent","activity_id":"a","occurred_at":1795000000,"event":"update","status":200,"#
            + #""latency_ms":42,"push_token":"\#(String(repeating: "ab", count: 32))","# + overrides + "}"
    }

    static func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
    static let tinyEvent = #"{"type":"activity.stale","activity_id":"a","occurred_at":1795000000}"#

    static let cases: [Hostile] = [
        // Nesting and size.
        Hostile(name: "objects nested 10,000 deep",
                body: bytes(String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000)),
                status: 400, message: "nesting deeper than 32"),
        Hostile(name: "content_state nested 40 deep",
                body: bytes(push(#""content_state":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40))),
                status: 400, message: "nesting deeper than 32"),
        Hostile(name: "a 1,000,000-byte string", body: bytes(push(#""reason":""# + String(repeating: "x", count: 1_000_000) + "\"")),
                status: 400, message: "string longer than 65536 bytes"),
        Hostile(name: "a 2 MiB body", body: bytes("[" + String(repeating: " ", count: 2 << 20) + "]"),
                status: 413, message: "exceeds 1048576 bytes"),
        Hostile(name: "a 100,000-digit number", body: bytes(push(#""payload_bytes":"# + String(repeating: "9", count: 100_000))),
                status: 400, message: "number longer than 64 characters"),
        Hostile(name: "an array of 200,000 elements",
                body: bytes(push(#""content_state":{"a":["# + Array(repeating: "0", count: 200_000).joined(separator: ",") + "]}")),
                status: 400, message: "more than 100000 elements"),
        Hostile(name: "content_state over 4 KB",
                body: bytes(push(#""content_state":{"a":""# + String(repeating: "x", count: 5000) + "\"}")),
                status: 422, message: "ActivityKit allows at most 4096"),
        // Encoding.
        Hostile(name: "overlong UTF-8", body: bytes(#"{"type":""#) + [0xC0, 0xAF] + bytes(#""}"#), status: 400, message: "invalid UTF-8"),
        Hostile(name: "UTF-8-encoded surrogate", body: bytes(#"{"type":""#) + [0xED, 0xA0, 0x80] + bytes(#""}"#),
                status: 400, message: "invalid UTF-8"),
        Hostile(name: "byte 0xFF in a key", body: bytes(#"{""#) + [0xFF] + bytes(#"":1}"#), status: 400, message: "invalid UTF-8"),
        Hostile(name: "truncated UTF-8 at the end", body: bytes(#"{"type":"a"#) + [0xE2, 0x82], status: 400, message: "UTF-8"),
        Hostile(name: "lone surrogate escape", body: bytes(push(#""reason":"\ud800""#)), status: 400, message: "lone surrogate"),
        Hostile(name: "NUL escape in an id", body: bytes(push(#""apns_id":"a\u0000b""#)), status: 422, message: "control characters"),
        // Numbers out of range.
        Hostile(name: "timestamp 1e999", body: bytes(push(#""timestamp":1e999"#)), status: 400, message: "number out of range"),
        Hostile(name: "apns_id -1e999", body: bytes(push(#""reason":"x","apns_id":-1e999"#)), status: 400, message: "number out of range"),
        Hostile(name: "latency_ms 1e300", body: bytes(push(#""priority":10"#).replacingOccurrences(of: #""latency_ms":42"#, with: #""latency_ms":1e300"#)),
                status: 422, message: "latency_ms"),
        // Reported dates are taken as sent (DESIGN.md section 3), up to where seconds lose their milliseconds.
        Hostile(name: "timestamp 1e300", body: bytes(push(#""timestamp":1e300"#)), status: 422, message: "outside -9000000000000000 … 9000000000000000 seconds (the upper bound excluded): 1e+300"),
        Hostile(name: "stale_date -1e300", body: bytes(push(#""stale_date":-1e300"#)), status: 422, message: "stale_date"),
        Hostile(name: "dismissal_date 1.7976931348623157e308", body: bytes(push(#""dismissal_date":1.7976931348623157e308"#)),
                status: 422, message: "dismissal_date"),
        Hostile(name: "status 1e300", body: bytes(push(#""priority":10"#).replacingOccurrences(of: #""status":200"#, with: #""status":1e300"#)),
                status: 422, message: "status"),
        Hostile(name: "payload_bytes 2^63", body: bytes(push(#""payload_bytes":9223372036854775808"#)), status: 422, message: "payload_bytes"),
        Hostile(name: "priority -2^63", body: bytes(push(#""priority":-9223372036854775808"#)), status: 422, message: "priority"),
        Hostile(name: "relevance_score 1e300", body: bytes(push(#""relevance_score":1e300"#)), status: 422, message: "relevance_score"),
        // Dates: `occurred_at` keeps its window; a reported date far off is stored with a warning.
        Hostile(name: "year 9999 string", body: bytes(push(#""timestamp":1795000000"#).replacingOccurrences(of: #""occurred_at":1795000000"#, with: #""occurred_at":"9999-12-31T23:59:59Z""#)),
                status: 422, message: "outside 2000-01-01 … 2100-01-01: 9999-12-31T23:59:59Z"),
        Hostile(name: "year 9999 with an offset into year 10000", body: bytes(push(#""stale_date":"9999-12-31T23:59:59-23:59""#)),
                status: 200, message: "accepted"),
        Hostile(name: "year 9999 as Unix seconds", body: bytes(push(#""timestamp":1795000000"#).replacingOccurrences(of: #""occurred_at":1795000000"#, with: #""occurred_at":253402300799"#)),
                status: 422, message: "9999-12-31T23:59:59Z"),
        Hostile(name: "year 0", body: bytes(push(#""stale_date":"0000-01-01T00:00:00Z""#)), status: 200, message: "accepted"),
        Hostile(name: "February 30th", body: bytes(push(#""stale_date":"2026-02-30T00:00:00Z""#)), status: 422, message: "RFC 3339"),
        // Batches.
        Hostile(name: "empty batch", body: bytes("[]"), status: 400, message: "no events"),
        Hostile(name: "empty body", body: [], status: 400, message: "not valid JSON"),
        Hostile(name: "blank NDJSON", body: bytes("\n \n\r\n"), contentType: "application/x-ndjson", status: 400, message: "no events"),
        Hostile(name: "10,000 tiny events", body: bytes("[" + Array(repeating: tinyEvent, count: 10_000).joined(separator: ",") + "]"),
                status: 413, message: "10000 events in one request; at most 1000"),
        Hostile(name: "10,000 tiny NDJSON events", body: bytes(Array(repeating: tinyEvent, count: 10_000).joined(separator: "\n")),
                contentType: "application/x-ndjson", status: 413, message: "10000 events in one request; at most 1000"),
        Hostile(name: "a megabyte of one-byte NDJSON values", body: Array(repeating: bytes("0\n"), count: 500_000).flatMap { $0 },
                contentType: "application/x-ndjson", status: 413, message: "500000 events in one request"),
        Hostile(name: "a megabyte of empty objects", body: bytes("[" + Array(repeating: "{}", count: 300_000).joined(separator: ",") + "]"),
                status: 413, message: "300000 events in one request; at most 1000"),
    ]

    /// Posts `input` on a fresh connection. A body over the server's limit is answered 413
    /// from its headers and the connection closed, so it is not sent: a client writing it
    /// anyway may get a reset instead of the answer (the race every HTTP/1.1 client has).
    static func post(_ input: Hostile, port: Int) throws -> RawResponse {
        let c = try RawConnection(port: port)
        try c.send("POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: \(input.contentType)\r\n"
                   + "Content-Length: \(input.body.count)\r\n\r\n")
        if input.body.count <= 1 << 20 { _ = try? c.send(input.body) }  // a refusal may close first: the answer counts
        guard let r = c.readResponse(seconds: 5), r.isComplete else {
            throw TestFailure("no answer to \(input.name)")
        }
        return r
    }

    /// The count taken before parsing agrees with the parser, whatever the strings hold.
    @Test(arguments: [
        (#"[]"#, 0), (#" [ ] "#, 0), (#"{}"#, 1), (#"[{}]"#, 1), (#"[1,2,3]"#, 3),
        (#"["a,b", {"x":[1,2],"y":"]"}, "\\\",", [[],[]], null]"#, 5), (#"["\\"]"#, 1),
    ])
    func eventCountMatchesTheParser(_ body: String, _ expected: Int) throws {
        #expect(IngestDecoder.topLevelCount(Array(body.utf8), format: .json) == expected)
        if case .array(let items) = try JSONParser.parse(body) { #expect(items.count == expected) }
        let ndjson = "\n" + Array(repeating: body, count: expected).joined(separator: "\r\n \n") + "\n\t\n"
        #expect(IngestDecoder.topLevelCount(Array(ndjson.utf8), format: .ndjson) == expected)
    }

    @Test(arguments: cases)
    func isRefusedClearlyAndNothingStored(_ input: Hostile) throws {
        let server = try TestServer()
        defer { server.stop() }
        let started = Date()
        let r = try Self.post(input, port: server.server.port)
        let seconds = Date().timeIntervalSince(started)
        print("hostile input \"\(input.name)\" (\(input.body.count) bytes): \(r.status) \(r.text.prefix(160)) "
              + "in \(String(format: "%.3f s", seconds))")
        #expect(r.status == input.status, "\(input.name): \(r.text.prefix(300))")
        #expect(r.text.contains(input.message), "\(input.name): \(r.text.prefix(300))")
        #expect(r.headers["content-type"] == "application/json")
        #expect(seconds < 2)
        if input.status != 200 {
            try IngestTests.expectNothingStored(server)
            // Counted, whichever layer refused it (the 2 MiB body never reaches the handler).
            let reason = [400: "malformed", 413: "too_large", 422: "invalid"][input.status] ?? "?"
            #expect(try server.metric(#"liveactivity_ingest_rejected_total{reason="\#(reason)"}"#) == 1, "\(input.name)")
        }
        #expect(try server.metric(#"liveactivity_http_requests_total{code="\#(input.status)",handler="/v1/events"}"#) == 1,
                "\(input.name)")
        #expect(try server.get("/-/healthy").status == 200)
    }

    /// Memory stays bounded: every hostile input, then the largest ones from four clients at
    /// once, against the real binary, whose peak RSS (VmHWM) is measured alone.
    @Test func hostileInputsKeepTheRealServerSmall() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let serve = try ServeProcess(["--db", dir + "/db.sqlite"])
        defer { _ = serve.stop() }
        let port = serve.port
        let client = HTTPClient(port: port)
        _ = try client.request("GET", "/metrics")
        let before = serve.memory()
        var refused = 0
        for input in Self.cases {
            let r = try Self.post(input, port: port)
            #expect(r.status == input.status, "\(input.name)")
            if r.status >= 400 { refused += 1 }
        }
        let sequential = serve.memory()
        let largest = Self.cases.filter { $0.body.count > 50_000 }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for input in largest {
                let status = try? Self.post(input, port: port).status
                if status != input.status { failures.withLock { $0.append("\(input.name): \(status.map(String.init) ?? "no answer")") } }
            }
        }
        let concurrent = serve.memory()
        #expect(failures.withLock { $0 } == [])
        print("hostile inputs against the real server: \(refused) requests refused; peak RSS \(before.peak >> 20) MiB before, "
              + "\(sequential.peak >> 20) MiB after \(Self.cases.count) sequential, "
              + "\(concurrent.peak >> 20) MiB after \(largest.count * 4) of the largest from 4 clients at once")
        #expect(sequential.peak - before.peak < 32 << 20)
        #expect(concurrent.peak - before.peak < 128 << 20)
    }
}
