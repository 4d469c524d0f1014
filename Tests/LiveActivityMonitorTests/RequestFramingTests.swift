import Foundation
import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// The real server against requests an attacker frames on purpose (issue 19, items 4 and 7):
/// request smuggling, heads it cannot read whole, and bodies it would refuse anyway. Each is
/// refused from its headers, at once, with the usual JSON error and security headers, nothing
/// is stored, and nothing sent behind it on the connection is served.
@Suite struct RequestFramingTests {
    static let ingestToken = "ingest-token-0123456789abcdef"

    static func started(_ id: String) -> String { IngestTests.started(id).jsonString }

    /// Sends `head` (with `body` after it), then reads one answer; nil if none came in 3 s.
    static func exchange(_ server: TestServer, _ head: String, body: String = "") throws
        -> (response: RawResponse?, connection: RawConnection) {
        let c = try RawConnection(port: server.server.port)
        _ = try? c.send(head + body)  // a refusal may close first: the answer counts
        return (c.readResponse(seconds: 3), c)
    }

    static func expectRefused(_ response: RawResponse?, _ status: Int, _ words: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response?.status == status, "\(response?.text ?? "no answer")", sourceLocation: sourceLocation)
        #expect(response?.headers["content-type"] == "application/json", sourceLocation: sourceLocation)
        #expect(response?.text.contains(words) == true, "\(response?.text ?? "no answer")", sourceLocation: sourceLocation)
        for name in SecurityTests.requiredHeaders {
            #expect(response?.headers[name] != nil, "\(status) lacks \(name)", sourceLocation: sourceLocation)
        }
    }

    /// Smuggling a second event past the first: two lengths, or a length and chunked. The
    /// whole request is refused, the event in it is not stored, and the request hidden behind
    /// it is never served: the connection closes after the one answer.
    /// The corpus's framing attacks (`Tests/FuzzCorpus/http-heads`, also replayed as bodies by
    /// the fuzz target), each sent raw: refused with a JSON answer, nothing stored, nothing
    /// behind it served, and the server still answering.
    @Test func everyFramingAttackOfTheCorpusIsRefused() throws {
        let server = try TestServer()
        defer { server.stop() }
        let directory = FuzzRegressionTests.corpus + "/http-heads"
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(names.count >= 7)
        for name in names {
            let request = try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
            let (response, connection) = try Self.exchange(server, request)
            #expect([400, 413, 501].contains(response?.status ?? 0), "\(name): \(response?.text ?? "no answer")")
            #expect(response?.headers["content-type"] == "application/json", "\(name)")
            #expect(connection.isClosed(within: 3), "\(name): the connection stays open after a doubtful frame")
        }
        #expect(try server.get("/api/activities/s1").status == 404, "nothing stored")
        #expect(try server.get("/-/healthy").status == 200)
    }

    @Test func smugglingIsRefusedAndNothingIsStored() throws {
        let server = try TestServer()
        defer { server.stop() }
        let body = Self.started("smuggled")
        let hidden = "POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(Self.started("hidden").utf8.count)\r\n\r\n" + Self.started("hidden")
        let framings = [
            "Content-Length: \(body.utf8.count)\r\nContent-Length: \(body.utf8.count + hidden.utf8.count)\r\n",
            "Content-Length: \(body.utf8.count + hidden.utf8.count)\r\nContent-Length: \(body.utf8.count)\r\n",
            "Content-Length: \(body.utf8.count), \(body.utf8.count + hidden.utf8.count)\r\n",
            "Content-Length: \(body.utf8.count)\r\nTransfer-Encoding: chunked\r\n",
            "Transfer-Encoding: chunked\r\nContent-Length: \(body.utf8.count)\r\n",
        ]
        for framing in framings {
            let head = "POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" + framing + "\r\n"
            let (response, c) = try Self.exchange(server, head, body: body + hidden)
            Self.expectRefused(response, 400, "Content-Length")
            #expect(response?.headers["connection"]?.lowercased() == "close", "\(framing)")
            #expect(c.readUntilClosed(seconds: 3) == ([], true), "a second answer came, or the connection stayed open: \(framing)")
        }
        #expect(try server.metric(#"liveactivity_ingest_events_total{type="activity.started"}"#) == 0)
        #expect(try server.metric(#"liveactivity_http_requests_total{code="400",handler="/v1/events"}"#) == 5)
        #expect(try server.metric(#"liveactivity_ingest_rejected_total{reason="malformed"}"#) == 5)
    }

    /// A transfer coding the server does not know used to hold the connection until it timed
    /// out (30 s by default); a broken length drew libmicrohttpd's HTML page with its head
    /// written twice. Each is now one JSON answer, at once.
    @Test func unknownCodingsAndBrokenLengthsAreAnsweredAtOnce() throws {
        let server = try TestServer()
        defer { server.stop() }
        let start = Date()
        for coding in ["gzip, chunked", "identity", "chunked, chunked"] {
            let (response, c) = try Self.exchange(server, "POST /v1/events HTTP/1.1\r\nHost: localhost\r\n"
                                                  + "Content-Type: application/json\r\nTransfer-Encoding: \(coding)\r\n\r\n",
                                                  body: "0\r\n\r\n")
            Self.expectRefused(response, 501, "Transfer-Encoding")
            #expect(c.isClosed(within: 3), "\(coding)")
        }
        for length in ["-1", "+5", "1e3", "", "18446744073709551616x"] {
            let (response, c) = try Self.exchange(server, "POST /v1/events HTTP/1.1\r\nHost: localhost\r\n"
                                                  + "Content-Type: application/json\r\nContent-Length: \(length)\r\n\r\n")
            Self.expectRefused(response, 400, "Content-Length")
            #expect(c.readUntilClosed(seconds: 3) == ([], true), "Content-Length \(length): the head came twice")
        }
        #expect(Date().timeIntervalSince(start) < 10)
    }

    /// `Expect: 100-continue` asks whether to send the body: the server says `100 Continue`
    /// only when it would take the request, and otherwise answers the final 4xx at once.
    @Test func expectContinueGetsTheRefusalInsteadOf100() throws {
        let server = try TestServer {
            $0.ingestToken = Self.ingestToken
            $0.maxBodyBytes = 4096
        }
        defer { server.stop() }
        let body = Self.started("expect")
        func ask(contentType: String, token: String?, length: Int, path: String = "/v1/events")
            throws -> (RawResponse?, RawConnection) {
            var head = "POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: \(contentType)\r\n"
                + "Expect: 100-continue\r\nContent-Length: \(length)\r\n"
            if let token { head += "Authorization: Bearer \(token)\r\n" }
            return try Self.exchange(server, head + "\r\n")
        }
        var (response, c) = try ask(contentType: "text/plain", token: Self.ingestToken, length: body.utf8.count)
        Self.expectRefused(response, 415, "Content-Type")
        #expect(c.isClosed(within: 3))
        (response, c) = try ask(contentType: "application/json", token: "wrong-token-0123456789", length: body.utf8.count)
        Self.expectRefused(response, 401, "unauthorized")
        #expect(response?.headers["www-authenticate"] == "Bearer")
        (response, c) = try ask(contentType: "application/json", token: nil, length: body.utf8.count)
        Self.expectRefused(response, 401, "unauthorized")
        (response, c) = try ask(contentType: "application/json", token: Self.ingestToken, length: 5000)
        Self.expectRefused(response, 413, "exceeds")
        (response, c) = try ask(contentType: "application/json", token: Self.ingestToken, length: 2, path: "/metrics")
        Self.expectRefused(response, 405, "GET")

        // A request it will take: 100 Continue, then the body, then the answer.
        (response, c) = try ask(contentType: "application/json", token: Self.ingestToken, length: body.utf8.count)
        #expect(response?.status == 100)
        try c.send(body)
        let accepted = c.readResponse(seconds: 3)
        #expect(accepted?.status == 200, "\(accepted?.text ?? "no answer")")
        #expect(try server.metric(#"liveactivity_ingest_events_total{type="activity.started"}"#) == 1)
        #expect(try server.metric(#"liveactivity_ingest_rejected_total{reason="unauthorized"}"#) == 2)
        #expect(try server.metric(#"liveactivity_ingest_rejected_total{reason="unsupported_media_type"}"#) == 1)
    }

    /// A compressed body would be parsed as if it were JSON: 415, saying why.
    @Test func contentEncodingIsRefused() throws {
        let server = try TestServer()
        defer { server.stop() }
        let body = Self.started("gzip")
        for coding in ["gzip", "deflate", "br"] {
            let (response, _) = try Self.exchange(server, "POST /v1/events HTTP/1.1\r\nHost: localhost\r\n"
                                                  + "Content-Type: application/json\r\nContent-Encoding: \(coding)\r\n"
                                                  + "Content-Length: \(body.utf8.count)\r\n\r\n", body: body)
            Self.expectRefused(response, 415, "Content-Encoding")
        }
        #expect(try server.metric(#"liveactivity_ingest_events_total{type="activity.started"}"#) == 0)
        #expect(try server.metric(#"liveactivity_ingest_rejected_total{reason="unsupported_media_type"}"#) == 3)
    }

    @Test func http11WithoutHostIsRefused() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (response, c) = try Self.exchange(server, "GET /metrics HTTP/1.1\r\n\r\n")
        Self.expectRefused(response, 400, "Host")
        #expect(c.isClosed(within: 3))
        let (old, _) = try Self.exchange(server, "GET /-/healthy HTTP/1.0\r\n\r\n")
        #expect(old?.status == 200)
    }

    /// `GET http://127.0.0.1:PORT/metrics` is `GET /metrics`; the target's authority is the
    /// host, so the DNS-rebinding guard judges the name in the target, not a `Host` beside it.
    @Test func absoluteFormTargetsAreRouted() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [IngestTests.started("a")]).status == 200)
        let port = server.server.port
        var (response, _) = try Self.exchange(server, "GET http://127.0.0.1:\(port)/metrics HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(response?.status == 200)
        #expect(response?.text.contains("liveactivity_ingest_events_total") == true)
        (response, _) = try Self.exchange(server, "GET http://localhost:\(port)/api/activities/a HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(response?.status == 200, "\(response?.text ?? "no answer")")
        (response, _) = try Self.exchange(server, "GET http://attacker.example/api/activities/a HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(response?.status == 403, "\(response?.text ?? "no answer")")
    }

    /// Oversized heads are answered 431 at every size, never by closing the connection silently.
    @Test func oversizedHeadersAre431() throws {
        let server = try TestServer()
        defer { server.stop() }
        for size in [30_000, 32_400, 32_550, 32_700, 40_000, 80_000] {
            let (response, c) = try Self.exchange(server, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nCookie: "
                                                  + String(repeating: "c", count: size) + "\r\n\r\n")
            Self.expectRefused(response, 431, "header")
            #expect(c.isClosed(within: 3))
        }
        #expect(try server.get("/-/healthy").status == 200)
    }
}
