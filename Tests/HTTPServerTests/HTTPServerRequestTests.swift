import Glibc
import HTTPServer
import Testing

/// Live tests: what reaches the handler, and what reaches the client.
@Suite struct HTTPServerRequestTests {
    @Test func getWithQueryAndHeadersReachesHandlerDecoded() throws {
        let seen = Locked<HTTPRequest?>(nil)
        let server = try HTTPServer.forTesting { request in
            seen.withLock { $0 = request }
            return .text("ok")
        }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        let response = try connection.get("/a%20b/c%2Fd?x=1&name=hello%20world&x=2&flag&plus=a+b",
                                          headers: ["X-Custom: Value 1", "Accept: text/plain"])
        #expect(response.status == 200)
        #expect(response.text == "ok")
        let request = try #require(seen.value)
        #expect(request.method == "GET")
        // The path comes as sent, so that an encoded "/" can be told from a separator.
        #expect(request.path == "/a%20b/c%2Fd")
        #expect(request.pathSegments == ["a b", "c/d"])
        #expect(request.query == ["x": "2", "name": "hello world", "flag": "", "plus": "a b"])
        #expect(request.header("x-custom") == "Value 1")
        #expect(request.header("X-CUSTOM") == "Value 1")
        #expect(request.headers["accept"] == "text/plain")
        #expect(request.headers["host"] == "test")
        #expect(request.body.isEmpty)
        #expect(request.remoteAddress == "127.0.0.1")
    }

    /// Query arguments are libmicrohttpd's to decode, as they always were: "+" is a space, a
    /// "%" without two hex digits stays; a decoded NUL stays in the value (read by size, not as a
    /// C string, which ended it there), for the handler to judge.
    @Test func queryArgumentsAreDecodedByLibmicrohttpd() throws {
        let seen = Locked<HTTPRequest?>(nil)
        let server = try HTTPServer.forTesting { request in
            seen.withLock { $0 = request }
            return .text("ok")
        }
        defer { server.stop() }
        let response = try RawConnection(port: server.port)
            .get("/p%2Fq?plus=a+b&sum=1%2B1&bad=%zz%4&euro=%E2%82%AC&nul=a%00b&slash=x%2Fy&hash=%23&q%20k=v&empty=")
        #expect(response.status == 200)
        let request = try #require(seen.value)
        #expect(request.query == ["plus": "a b", "sum": "1+1", "bad": "%zz%4", "euro": "\u{20AC}", "nul": "a\u{0}b",
                                  "slash": "x/y", "hash": "#", "q k": "v", "empty": ""])
    }

    /// Each segment is decoded once, after splitting: "%252F" is the three characters "%2F", an
    /// encoded NUL or a broken escape makes the path undecodable rather than cut short.
    @Test func pathIsSplitBeforeItIsDecoded() throws {
        let seen = Locked<[String]>([])
        let server = try HTTPServer.forTesting { request in
            seen.withLock { $0.append(request.path) }
            return .text(request.pathSegments.map { $0.joined(separator: "|") } ?? "undecodable")
        }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        let cases: [(String, String)] = [
            ("/api/bookings/2026%2F1042", "api|bookings|2026/1042"),
            ("/api/activities/100%25", "api|activities|100%"),
            ("/a/%252F/b", "a|%2F|b"),
            ("/x%3Fy%23z", "x?y#z"),
            ("/caf%C3%A9/%F0%9F%9A%95", "caf\u{E9}|\u{1F695}"),
            ("/a+b", "a+b"),
            ("/", ""),
            ("/a//b/", "a||b|"),
            ("/a%00b", "undecodable"),
            ("/a%zz", "undecodable"),
            ("/a%2", "undecodable"),
            ("/%C3", "undecodable"),
            ("/%C0%AF", "undecodable"),
        ]
        for (path, expected) in cases {
            let response = try connection.get(path)
            #expect(response.text == expected, "\(path)")
        }
        #expect(seen.value == cases.map(\.0))
    }

    @Test func postBodyTrickledInPiecesArrivesWhole() throws {
        let seen = Locked<[UInt8]>([])
        let server = try HTTPServer.forTesting { request in
            seen.withLock { $0 = request.body }
            return .text("\(request.body.count)")
        }
        defer { server.stop() }
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 7) }
        let connection = try RawConnection(port: server.port)
        try connection.send("POST /upload HTTP/1.1\r\nHost: test\r\nContent-Type: application/octet-stream\r\n"
                            + "Content-Length: \(body.count)\r\n\r\n")
        for (index, start) in stride(from: 0, to: body.count, by: 7_000).enumerated() {
            try connection.send(Array(body[start..<min(start + 7_000, body.count)]))
            if index % 8 == 0 { usleep(2_000) }  // let some pieces arrive as separate reads
        }
        let response = try connection.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "300000")
        let sameBody = seen.value == body  // compared outside #expect: a 300 KB diff is unreadable
        #expect(sameBody, "received \(seen.value.count) bytes, not the \(body.count) sent")
    }

    @Test func chunkedBodyUnderTheLimitArrivesWhole() throws {
        let seen = Locked<[UInt8]>([])
        let server = try HTTPServer.forTesting({ $0.maxBodyBytes = 10_000 }) { request in
            seen.withLock { $0 = request.body }
            return .text("\(request.body.count)")
        }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send("POST /x HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        var expected: [UInt8] = []
        for piece in 0..<10 {
            let chunk = [UInt8](repeating: UInt8(65 + piece), count: 999)
            expected += chunk
            try connection.send("\(String(chunk.count, radix: 16))\r\n")
            try connection.send(chunk + Array("\r\n".utf8))
        }
        try connection.send("0\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 200)
        let sameBody = seen.value == expected
        #expect(sameBody, "received \(seen.value.count) bytes, not the \(expected.count) sent")
    }

    @Test func keepAliveServesTwoRequestsOnOneSocket() throws {
        let server = try HTTPServer.forTesting { request in .text("you asked for \(request.path)") }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        let first = try connection.get("/one")
        #expect(first.status == 200)
        #expect(first.text == "you asked for /one")
        #expect(first.header("connection")?.lowercased() != "close")
        let second = try connection.get("/two")
        #expect(second.status == 200)
        #expect(second.text == "you asked for /two")
        // A POST with a body, then a GET, still on the same socket.
        try connection.send("POST /three HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhello")
        #expect(try connection.readResponse().text == "you asked for /three")
        #expect(try connection.get("/four").text == "you asked for /four")
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try HTTPServer.forTesting { request in .text(request.path) }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send("GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try connection.readResponse().text == "/a")
        #expect(try connection.readResponse().text == "/b")
    }

    @Test func handlerStatusHeadersAndBodyAreSentWithDefaultHeaders() throws {
        let server = try HTTPServer.forTesting({
            $0.defaultHeaders = [(name: "X-Content-Type-Options", value: "nosniff"),
                                 (name: "Content-Security-Policy", value: "default-src 'self'"),
                                 (name: "X-Served-By", value: "default")]
        }) { request in
            if request.path == "/override" {
                return HTTPResponse(status: 201, headers: [(name: "x-served-by", value: "handler"),
                                                           (name: "Set-Cookie", value: "a=1"),
                                                           (name: "Set-Cookie", value: "b=2")],
                                    body: Array("made".utf8))
            }
            return HTTPResponse(status: 404, body: Array("{\"error\":\"not found\"}".utf8))
        }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        let plain = try connection.get("/missing")
        #expect(plain.status == 404)
        #expect(plain.text == "{\"error\":\"not found\"}")
        #expect(plain.values("x-content-type-options") == ["nosniff"])
        #expect(plain.values("content-security-policy") == ["default-src 'self'"])
        #expect(plain.values("x-served-by") == ["default"])

        let overridden = try connection.get("/override")
        #expect(overridden.status == 201)
        #expect(overridden.text == "made")
        #expect(overridden.values("x-served-by") == ["handler"])
        #expect(overridden.values("set-cookie") == ["a=1", "b=2"])
        #expect(overridden.values("x-content-type-options") == ["nosniff"])
    }

    @Test func headerWithLineBreakIsDroppedAndLogged() throws {
        let logged = Locked<[String]>([])
        let server = try HTTPServer.forTesting({ configuration in
            configuration.errorLog = { message in logged.withLock { $0.append(message) } }
        }) { _ in
            HTTPResponse(status: 200, headers: [(name: "X-Evil", value: "a\r\nX-Injected: yes"),
                                                (name: "X-Fine", value: "ok")])
        }
        defer { server.stop() }
        let response = try RawConnection(port: server.port).get("/")
        #expect(response.status == 200)
        #expect(response.header("x-injected") == nil)
        #expect(response.header("x-evil") == nil)
        #expect(response.header("x-fine") == "ok")
        #expect(logged.value.contains { $0.contains("X-Evil") })
    }

    @Test func invalidStatusBecomes500() throws {
        let server = try HTTPServer.forTesting { _ in HTTPResponse(status: 42) }
        defer { server.stop() }
        #expect(try RawConnection(port: server.port).get("/").status == 500)
    }

    @Test func dualStackServerAnswersIPv4AndIPv6Clients() throws {
        let seen = Locked<[String?]>([])
        let server = try HTTPServer.forTesting({ $0.host = "::" }) { request in
            seen.withLock { $0.append(request.remoteAddress) }
            return .text("hi")
        }
        defer { server.stop() }
        #expect(try RawConnection(host: "127.0.0.1", port: server.port).get("/").text == "hi")
        #expect(try RawConnection(host: "::1", port: server.port).get("/").text == "hi")
        #expect(seen.value == ["127.0.0.1", "::1"])
    }
}
