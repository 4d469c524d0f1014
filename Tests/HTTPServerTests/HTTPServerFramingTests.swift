import Glibc
import HTTPServer
import Testing

/// Live tests of request framing and of heads the server cannot take (RFC 9112 sections 3 and
/// 6): a request whose body length is ambiguous is refused from its headers alone, at once,
/// and its connection closed, so that nothing sent after it is ever read as a request of its
/// own (request smuggling). Every such answer, including the ones libmicrohttpd makes itself,
/// is one JSON response with the default headers.
@Suite struct HTTPServerFramingTests {
    static let defaults: [(name: String, value: String)] = [
        (name: "X-Content-Type-Options", value: "nosniff"),
        (name: "Content-Security-Policy", value: "default-src 'self'"),
    ]

    /// A server with the default headers, a long connection timeout (so that a request the
    /// server waits on shows as a receive timeout, not as a close), a handler that answers
    /// "METHOD path body-length" and records it, and a record of the answers it gave itself.
    struct Fixture {
        let server: HTTPServer
        let handled: Locked<[String]>
        let told: Locked<[String]>

        init(_ configure: (inout HTTPServer.Configuration) -> Void = { _ in }) throws {
            let handled = Locked<[String]>([])
            let told = Locked<[String]>([])
            server = try HTTPServer.forTesting({
                $0.connectionTimeoutSeconds = 30
                $0.defaultHeaders = HTTPServerFramingTests.defaults
                $0.serverAnswered = { path, status in told.withLock { $0.append("\(status) \(path)") } }
                configure(&$0)
            }) { request in
                let line = "\(request.method) \(request.path) \(request.body.count)"
                handled.withLock { $0.append(line) }
                return .text(line)
            }
            self.handled = handled
            self.told = told
        }

        /// A fresh connection that gives up on a silent server after 3 s.
        func connect() throws -> RawConnection {
            try RawConnection(port: server.port, receiveTimeout: 3)
        }
    }

    /// One answer from the server, JSON, with the default headers once each and
    /// `Connection: close`, after which the connection closes with nothing more sent: the
    /// headers were written once and nothing pipelined behind the request was served.
    static func expectRefusal(_ connection: RawConnection, status: Int, mentioning words: String,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let response = try connection.readResponse()
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.header("content-type") == "application/json", sourceLocation: sourceLocation)
        #expect(response.text.hasPrefix("{\"error\":\""), "body: \(response.text)", sourceLocation: sourceLocation)
        #expect(response.text.contains(words), "body: \(response.text)", sourceLocation: sourceLocation)
        #expect(response.values("x-content-type-options") == ["nosniff"], sourceLocation: sourceLocation)
        #expect(response.values("content-security-policy") == ["default-src 'self'"], sourceLocation: sourceLocation)
        #expect(response.header("connection")?.lowercased() == "close", sourceLocation: sourceLocation)
        #expect(connection.waitForClose(), "more was sent after the answer, or the connection stayed open",
                sourceLocation: sourceLocation)
    }

    static let pipelined = "GET /pipelined HTTP/1.1\r\nHost: test\r\n\r\n"

    // MARK: Content-Length and Transfer-Encoding (RFC 9112 section 6)

    /// Two lengths that differ, as two fields or as a list: which one frames the body is
    /// ambiguous. Identical duplicates are refused as well: no client sends them.
    @Test(arguments: ["Content-Length: 5\r\nContent-Length: 6", "Content-Length: 6\r\nContent-Length: 5",
                      "Content-Length: 5, 6", "Content-Length: 5\r\nContent-Length: 5", "Content-Length: 5, 5",
                      "Content-Length: 5\r\ncontent-length: 6"])
    func conflictingOrRepeatedContentLengthsAreRefused(_ lengths: String) throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        try connection.send("POST /v1/events HTTP/1.1\r\nHost: test\r\n\(lengths)\r\n\r\nhello!" + Self.pipelined)
        try Self.expectRefusal(connection, status: 400, mentioning: "Content-Length")
        #expect(fixture.handled.value.isEmpty)
        #expect(fixture.told.value == ["400 /v1/events"])
    }

    /// Content-Length and Transfer-Encoding together: refused, and whatever follows on the
    /// connection is never read (a front end that framed by the length would see a request there).
    @Test(arguments: ["Content-Length: 5\r\nTransfer-Encoding: chunked", "Transfer-Encoding: chunked\r\nContent-Length: 5",
                      "Content-Length: 2\r\nTransfer-Encoding: identity", "Content-Length: 0\r\nTransfer-Encoding: chunked"])
    func contentLengthWithTransferEncodingIsRefusedAndTheConnectionClosed(_ framing: String) throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        try connection.send("POST /v1/events HTTP/1.1\r\nHost: test\r\n\(framing)\r\n\r\n0\r\n\r\n" + Self.pipelined)
        try Self.expectRefusal(connection, status: 400, mentioning: "Transfer-Encoding")
        #expect(fixture.handled.value.isEmpty)
    }

    /// Only `chunked`, once, is understood. Anything else was read until the connection timed
    /// out (the body's end unknowable); it is answered 501 at once.
    @Test(arguments: ["Transfer-Encoding: gzip, chunked", "Transfer-Encoding: identity", "Transfer-Encoding: chunked, chunked",
                      "Transfer-Encoding: gzip", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
                      "Transfer-Encoding: chunked;q=1", "Transfer-Encoding: x-chunked", "Transfer-Encoding:"])
    func transferCodingsOtherThanChunkedAre501AtOnce(_ coding: String) throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        try connection.send("POST /v1/events HTTP/1.1\r\nHost: test\r\n\(coding)\r\n\r\n0\r\n\r\n")
        try Self.expectRefusal(connection, status: 501, mentioning: "Transfer-Encoding")
        #expect(fixture.handled.value.isEmpty)
        #expect(fixture.told.value == ["501 /v1/events"])
    }

    /// HTTP/1.0 has no transfer codings: a 1.0 request that declares one is framed faultily.
    @Test func transferEncodingOnHTTP10IsRefused() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        try connection.send("POST /v1/events HTTP/1.0\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        try Self.expectRefusal(connection, status: 400, mentioning: "Transfer-Encoding")
    }

    /// What stays accepted: one length, or `chunked` in any case, keep-alive intact.
    @Test func plainFramingIsStillServedWithKeepAlive() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        try connection.send("POST /a HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhello")
        #expect(try connection.readResponse().text == "POST /a 5")
        try connection.send("POST /b HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        #expect(try connection.readResponse().text == "POST /b 3")
        try connection.send("POST /c HTTP/1.1\r\nHost: test\r\nContent-Length: 007\r\nContent-Encoding: identity\r\n\r\n1234567")
        #expect(try connection.readResponse().text == "POST /c 7")
        #expect(try connection.get("/d").text == "GET /d 0")
    }

    /// A length that is not one decimal number. libmicrohttpd refuses these itself, before the
    /// handler is called, and wrote its response head twice; the answer is now the server's own.
    @Test(arguments: ["-1", "+5", "1e3", "", "0x10", "5 5", " 5a", "5.0", "99999999999999999999x"])
    func malformedContentLengthIsAnswered400Once(_ length: String) throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        try connection.send("POST /v1/events HTTP/1.1\r\nHost: test\r\nContent-Length: \(length)\r\n\r\nhello" + Self.pipelined)
        try Self.expectRefusal(connection, status: 400, mentioning: "Content-Length")
        #expect(fixture.handled.value.isEmpty)
        #expect(fixture.told.value == ["400 /v1/events"])
    }

    /// The same beside connections between requests on the same polling thread (one opened and
    /// silent, one kept alive after a request): they cannot be the one refused, so the answer is
    /// still the server's, once. (It was libmicrohttpd's page, its head written twice, whenever
    /// another connection of the thread was open.)
    @Test func malformedContentLengthBesideIdleConnectionsIsAnswered400Once() throws {
        let fixture = try Fixture { $0.threadPoolSize = 1 }
        defer { fixture.server.stop() }
        let silent = try fixture.connect()
        let keptAlive = try fixture.connect()
        #expect(try keptAlive.get("/before").text == "GET /before 0")
        let connection = try fixture.connect()
        try connection.send("GET /metrics HTTP/1.1\r\nHost: test\r\nContent-Length: abc\r\n\r\n")
        try Self.expectRefusal(connection, status: 400, mentioning: "Content-Length")
        #expect(fixture.told.value == ["400 /metrics"])
        #expect(try keptAlive.get("/after").text == "GET /after 0")
        #expect(try silent.get("/silent").text == "GET /silent 0")
    }

    /// Whitespace between a field's name and its colon, or a control character such as a bare CR
    /// in a value: libmicrohttpd keeps the first in the name and the second in the value, so the
    /// framing field they hide framed nothing here and the body behind the head was served as a
    /// request of its own (smuggling, behind a proxy that reads such a head otherwise).
    @Test(arguments: ["Content-Length : 39", "Content-Length\t: 39", "X-A: a\rContent-Length: 39",
                      "Transfer-Encoding : chunked", "X-A: a\u{7f}b"])
    func malformedFieldNamesAndValuesAreRefused(_ field: String) throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        try connection.send("POST /v1/events HTTP/1.1\r\nHost: test\r\n\(field)\r\n\r\n" + Self.pipelined)
        try Self.expectRefusal(connection, status: 400, mentioning: "header field")
        #expect(fixture.handled.value.isEmpty)
    }

    /// What a field may hold stays served: a tab inside a value, bytes beyond ASCII, every token
    /// character in a name.
    @Test func fieldsWithTabsAndUTF8AreServed() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        #expect(try connection.get("/ok", headers: ["X-A: a\tb", "X-B: café", "X!#$%&'*+-.^_`|~9: v"]).text == "GET /ok 0")
    }

    /// Twenty digits do not fit in 64 bits: too large, like any length over the cap.
    @Test func contentLengthBeyond64BitsIsAnswered413Once() throws {
        let fixture = try Fixture { $0.maxBodyBytes = 1_000 }
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        try connection.send("POST /v1/events HTTP/1.1\r\nHost: test\r\nContent-Length: 99999999999999999999\r\n\r\n")
        try Self.expectRefusal(connection, status: 413, mentioning: "request body exceeds 1000 bytes")
        #expect(fixture.told.value == ["413 /v1/events"])
    }

    // MARK: Host and request target (RFC 9112 section 3)

    @Test func http11WithoutHostOrWithTwoIsRefused() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        var connection = try fixture.connect()
        try connection.send("GET /x HTTP/1.1\r\nAccept: */*\r\n\r\n")
        try Self.expectRefusal(connection, status: 400, mentioning: "Host")
        connection = try fixture.connect()
        try connection.send("GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
        try Self.expectRefusal(connection, status: 400, mentioning: "Host")
        #expect(fixture.handled.value.isEmpty)
        // HTTP/1.0 has no Host requirement.
        connection = try fixture.connect()
        try connection.send("GET /x HTTP/1.0\r\n\r\n")
        #expect(try connection.readResponse().text == "GET /x 0")
    }

    /// `GET http://host:port/path` (absolute form, what a client sends to a proxy) names the
    /// same resource as `GET /path` with `Host: host:port`; the target's authority is the host.
    @Test func absoluteFormTargetIsRoutedByItsPath() throws {
        let seen = Locked<[HTTPRequest]>([])
        let server = try HTTPServer.forTesting { request in
            seen.withLock { $0.append(request) }
            return .text(request.path)
        }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port, receiveTimeout: 3)
        try connection.send("GET http://127.0.0.1:\(server.port)/metrics?x=1 HTTP/1.1\r\nHost: ignored.example\r\n\r\n")
        #expect(try connection.readResponse().text == "/metrics")
        try connection.send("GET HTTPS://Example.COM HTTP/1.1\r\nHost: example.com\r\n\r\n")
        #expect(try connection.readResponse().text == "/")
        try connection.send("GET http://localhost/api/bookings/2026%2F1?y=2 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(try connection.readResponse().text == "/api/bookings/2026%2F1")
        let requests = seen.value
        try #require(requests.count == 3)
        #expect(requests[0].query == ["x": "1"])
        #expect(requests[0].header("host") == "127.0.0.1:\(server.port)")
        #expect(requests[1].header("host") == "Example.COM")
        #expect(requests[2].pathSegments == ["api", "bookings", "2026/1"])
        #expect(requests[2].query == ["y": "2"])
    }

    // MARK: Content-Encoding (RFC 9110 section 8.4)

    /// The server decodes no content coding: a body in one would reach the handler as bytes it
    /// cannot read. Refused from the headers, before the body is read.
    @Test(arguments: ["gzip", "deflate", "br", "GZIP", "gzip, identity", "identity, gzip", "x-gzip"])
    func contentEncodingOtherThanIdentityIs415(_ coding: String) throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        try connection.send("POST /v1/events HTTP/1.1\r\nHost: test\r\nContent-Encoding: \(coding)\r\nContent-Length: 2\r\n\r\n[]")
        try Self.expectRefusal(connection, status: 415, mentioning: "Content-Encoding")
        #expect(fixture.handled.value.isEmpty)
        #expect(fixture.told.value == ["415 /v1/events"])
    }

    // MARK: Expect: 100-continue (RFC 9110 section 10.1.1)

    /// `100 Continue` only when the request will be taken: `checkBeforeContinue` sees the head
    /// first, and what it refuses is answered at once, the body never asked for.
    @Test func expectContinueIsRefusedWithout100WhenTheCheckRefuses() throws {
        let checked = Locked<[String]>([])
        let fixture = try Fixture {
            $0.checkBeforeContinue = { request in
                checked.withLock { $0.append("\(request.method) \(request.path) \(request.header("content-type") ?? "-")") }
                guard request.header("content-type") == "application/json" else {
                    return HTTPResponse(status: 415, headers: [(name: "Content-Type", value: "application/json")],
                                        body: Array(#"{"error":"Content-Type must be application/json"}"#.utf8))
                }
                return nil
            }
        }
        defer { fixture.server.stop() }
        let refused = try fixture.connect()
        try refused.send("POST /v1/events HTTP/1.1\r\nHost: test\r\nContent-Type: text/plain\r\n"
                         + "Expect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        try Self.expectRefusal(refused, status: 415, mentioning: "Content-Type")

        let accepted = try fixture.connect()
        try accepted.send("POST /v1/events HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                          + "Expect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        #expect(try accepted.readResponse().status == 100)
        try accepted.send("[]")
        #expect(try accepted.readResponse().text == "POST /v1/events 2")
        // Without Expect the check is not asked: the handler decides, after the body.
        try accepted.send("POST /plain HTTP/1.1\r\nHost: test\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nab")
        #expect(try accepted.readResponse().text == "POST /plain 2")
        #expect(checked.value == ["POST /v1/events text/plain", "POST /v1/events application/json"])
        #expect(fixture.handled.value == ["POST /v1/events 2", "POST /plain 2"])
    }

    // MARK: Heads the server cannot take whole

    /// Headers from 25 KiB up: 431, from the server itself (never the connection closed
    /// unanswered, as just under the 32 KiB pool, where libmicrohttpd had room for the headers
    /// but none left for a response), with the default headers, at every size.
    @Test(arguments: [25_000, 30_000, 32_000, 32_300, 32_400, 32_500, 32_600, 32_700, 32_800, 33_000, 40_000, 70_000, 200_000])
    func headersTooLargeAre431(_ size: Int) throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        _ = try? connection.send("GET /big HTTP/1.1\r\nHost: test\r\nX-Big: " + String(repeating: "a", count: size) + "\r\n\r\n")
        try Self.expectRefusal(connection, status: 431, mentioning: "header")
        #expect(fixture.handled.value.isEmpty)
    }

    /// Many small fields cost libmicrohttpd more than their bytes: also 431, not a silent close.
    @Test func thousandsOfSmallHeadersAre431() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        let fields = (0..<3_000).map { "X-\($0): 1\r\n" }.joined()
        _ = try? connection.send("GET /many HTTP/1.1\r\nHost: test\r\n" + fields + "\r\n")
        try Self.expectRefusal(connection, status: 431, mentioning: "header")
    }

    /// Up to the limit, long headers (cookies, URLs) are served as before.
    @Test func longHeadersUnderTheLimitAreServed() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        #expect(try connection.get("/long", headers: ["X-Long: " + String(repeating: "b", count: 20_000)]).text == "GET /long 0")
        #expect(try connection.get("/after").text == "GET /after 0")
    }

    /// A NUL byte inside a field: libmicrohttpd hands on the value up to it, so what follows
    /// (`Bearer <token>\0junk`) would go unseen. Such a head is refused.
    @Test(arguments: ["X-Token: abc\0junk", "Authorization: Bearer abc\0", "X-A: 1\0\r\nX-B: 2"])
    func fieldWithANulByteIsRefused(_ field: String) throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        try connection.send("GET /nul HTTP/1.1\r\nHost: test\r\n\(field)\r\n\r\n")
        try Self.expectRefusal(connection, status: 400, mentioning: "NUL")
        #expect(fixture.handled.value.isEmpty)
    }

    @Test func targetWithANulByteIsRefused() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        try connection.send(Array("GET /nul\0/../secret HTTP/1.1\r\nHost: test\r\n\r\n".utf8))
        try Self.expectRefusal(connection, status: 400, mentioning: "NUL")
        #expect(fixture.handled.value.isEmpty)
    }

    // MARK: libmicrohttpd's own answers

    /// Requests libmicrohttpd refuses before the handler is called get the server's JSON and
    /// default headers, written once, not libmicrohttpd's bare HTML page.
    @Test(arguments: [
        ("GET /x HTTP/1.1\r\nHost: test\r\nno colon here\r\n\r\n", 400, "malformed request"),
        ("POST /x HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", 400, "chunked"),
        ("POST /x HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n", 400, "chunked"),
        ("POST /x HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", 413, "exceeds"),
    ])
    func libmicrohttpdRefusalsCarryTheDefaultHeaders(_ request: String, _ status: Int, _ words: String) throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        try connection.send(request)
        try Self.expectRefusal(connection, status: status, mentioning: words)
        #expect(fixture.handled.value.isEmpty)
        #expect(fixture.told.value == ["\(status) /x"])
    }

    /// An unsupported HTTP version on a connection that has already been served: the
    /// server's own 505. (On a connection's very first request libmicrohttpd refuses it
    /// before any callback identifies the connection: its own page, without the default
    /// headers, remains there.)
    @Test(arguments: ["HTTP/2.0", "HTTP/0.9", "HTTP/3.0"])
    func unsupportedVersionAfterAServedRequestIs505WithTheDefaultHeaders(_ version: String) throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try fixture.connect()
        #expect(try connection.get("/first").text == "GET /first 0")
        try connection.send("GET /second \(version)\r\nHost: test\r\n\r\n")
        try Self.expectRefusal(connection, status: 505, mentioning: "HTTP")
    }
}
