import HTTPServer
import Testing

/// Live tests: identical small answers reuse one libmicrohttpd response per polling thread
/// (`ResponseCache`); an answer must never go out with another one's status, headers, body or
/// `Connection: close`.
@Suite struct HTTPServerResponseReuseTests {
    /// Answers that differ only in their status, one header's value or their body, more of them
    /// than a thread keeps, each asked for three times on connections of both polling threads.
    @Test func reusedResponsesAreNeverMixedUp() throws {
        let server = try HTTPServer.forTesting({ configuration in
            configuration.threadPoolSize = 2
            configuration.defaultHeaders = [(name: "X-Content-Type-Options", value: "nosniff")]
        }) { request in
            // "/<status>/<tag>/<body>"; "/big" is over the size kept.
            if request.path == "/big" { return .text(String(repeating: "b", count: 2_000)) }
            let parts = request.path.split(separator: "/").map(String.init)
            return HTTPResponse(status: Int(parts[0]) ?? 500, headers: [(name: "X-Tag", value: parts[1])],
                                body: Array(parts[2].utf8))
        }
        defer { server.stop() }
        var answers: [(status: Int, tag: String, body: String)] = []
        for status in [200, 404] {
            for tag in ["a", "b"] {
                for body in ["x", "y", "z"] { answers.append((status, tag, body)) }
            }
        }
        let connections = try (0..<4).map { _ in try RawConnection(port: server.port) }
        for round in 0..<3 {
            for (i, answer) in answers.enumerated() {
                let connection = connections[(i + round) % connections.count]
                let response = try connection.get("/\(answer.status)/\(answer.tag)/\(answer.body)")
                #expect(response.status == answer.status)
                #expect(response.values("x-tag") == [answer.tag])
                #expect(response.text == answer.body)
                #expect(response.values("x-content-type-options") == ["nosniff"])
                #expect(response.header("connection") == nil)
            }
            let big = try connections[round].get("/big")
            #expect(big.text == String(repeating: "b", count: 2_000))
        }
    }

    /// The server's own refusal closes its connection (`Connection: close`); the very same
    /// status, headers and body from the handler afterwards keep theirs open.
    @Test func anAnswerThatClosesIsNotReusedForOneThatKeepsTheConnection() throws {
        let limit = 100
        let refusal = Array("{\"error\":\"request body exceeds \(limit) bytes\"}".utf8)
        let server = try HTTPServer.forTesting({ configuration in
            configuration.threadPoolSize = 1
            configuration.maxBodyBytes = limit
        }) { _ in
            HTTPResponse(status: 413, headers: [(name: "Content-Type", value: "application/json")], body: refusal)
        }
        defer { server.stop() }
        let refused = try RawConnection(port: server.port)
        try refused.send("POST /x HTTP/1.1\r\nHost: test\r\nContent-Length: \(limit + 1)\r\n\r\n")
        let first = try refused.readResponse()
        #expect(first.status == 413)
        #expect(first.body == refusal)
        #expect(first.header("connection") == "close")

        let kept = try RawConnection(port: server.port)
        for _ in 0..<2 {
            let same = try kept.get("/same")
            #expect(same.status == 413)
            #expect(same.body == refusal)
            #expect(same.header("connection") == nil)
        }
    }
}
