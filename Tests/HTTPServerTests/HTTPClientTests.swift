import HTTPServer
import Testing

/// The blocking client the demo, tests and benchmarks use, against the real daemon.
@Suite struct HTTPClientTests {
    @Test func reachesAnIPv4Server() throws {
        let server = try HTTPServer.forTesting { _ in .text("v4") }
        defer { server.stop() }
        let client = HTTPClient(host: "127.0.0.1", port: server.port)
        defer { client.close() }
        #expect(try client.request("GET", "/").text == "v4")
    }

    /// `serve --host ::1 --demo` posts through this client to `::1`.
    @Test(.enabled(if: IPv6Loopback.isAvailable, Comment(rawValue: IPv6Loopback.skipReason)))
    func reachesAServerBoundToTheIPv6Loopback() throws {
        let hosts = Locked<[String?]>([])
        let server = try HTTPServer.forTesting({ $0.host = "::1" }) { request in
            hosts.withLock { $0.append(request.header("Host")) }
            return .text("v6 from \(request.remoteAddress ?? "?")")
        }
        defer { server.stop() }
        for host in ["::1", "[::1]"] {
            let client = HTTPClient(host: host, port: server.port)
            defer { client.close() }
            let response = try client.request("POST", "/v1/events", body: Array("{}".utf8))
            #expect(response.status == 200)
            #expect(response.text == "v6 from ::1")
        }
        #expect(hosts.value == ["[::1]:\(server.port)", "[::1]:\(server.port)"], "the Host header brackets an IPv6 literal")
    }

    @Test func aNameIsRefusedWithAMessage() {
        let client = HTTPClient(host: "example.invalid", port: 9)
        #expect {
            try client.request("GET", "/")
        } throws: { error in
            "\(error)".contains("not an IPv4 or IPv6 address: example.invalid")
        }
    }
}
