import Dispatch
import Glibc
import HTTPServer
import Testing

/// Live tests: body cap, timeouts, connection limits, concurrency.
@Suite struct HTTPServerLimitTests {
    static let defaults: [(name: String, value: String)] = [(name: "X-Content-Type-Options", value: "nosniff")]

    @Test func declaredBodyOverTheCapIsAnswered413BeforeTheBodyIsSent() throws {
        let called = Locked(false)
        let told = Locked<[String]>([])
        let server = try HTTPServer.forTesting({
            $0.maxBodyBytes = 1_000
            $0.defaultHeaders = Self.defaults
            $0.serverAnswered = { path, status in told.withLock { $0.append("\(status) \(path)") } }
        }) { _ in
            called.withLock { $0 = true }
            return .text("should not run")
        }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port, receiveTimeout: 3)
        // Headers only: the body is never sent, so a server that waited for it would time out.
        try connection.send("POST /v1/events HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                            + "Content-Length: 1001\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 413)
        #expect(response.header("content-type") == "application/json")
        #expect(response.text == "{\"error\":\"request body exceeds 1000 bytes\"}")
        #expect(response.header("connection")?.lowercased() == "close")
        #expect(response.values("x-content-type-options") == ["nosniff"])
        #expect(connection.waitForClose())
        #expect(called.value == false)
        #expect(told.value == ["413 /v1/events"], "the answer the handler never saw is reported")
    }

    @Test func expectContinueGets100ForABodyUnderTheCapAnd413Otherwise() throws {
        let server = try HTTPServer.forTesting({ $0.maxBodyBytes = 1_000 }) { request in .text("\(request.body.count)") }
        defer { server.stop() }
        // What curl does for bodies over 1 KiB: headers, wait for 100 Continue, then the body.
        let connection = try RawConnection(port: server.port)
        try connection.send("POST / HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 900\r\n\r\n")
        #expect(try connection.readResponse().status == 100)
        try connection.send([UInt8](repeating: 1, count: 900))
        #expect(try connection.readResponse().text == "900")

        let tooBig = try RawConnection(port: server.port)
        try tooBig.send("POST / HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 2000\r\n\r\n")
        #expect(try tooBig.readResponse().status == 413)
    }

    @Test func bodyExactlyAtTheCapIsAccepted() throws {
        let server = try HTTPServer.forTesting({ $0.maxBodyBytes = 1_000 }) { request in .text("\(request.body.count)") }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n")
        try connection.send([UInt8](repeating: 7, count: 1_000))
        #expect(try connection.readResponse().text == "1000")
    }

    @Test func chunkedBodyGrowingOverTheCapIsAnswered413() throws {
        let called = Locked(false)
        let told = Locked<[String]>([])
        let server = try HTTPServer.forTesting({
            $0.maxBodyBytes = 1_000
            $0.defaultHeaders = Self.defaults
            $0.serverAnswered = { path, status in told.withLock { $0.append("\(status) \(path)") } }
        }) { _ in
            called.withLock { $0 = true }
            return .text("should not run")
        }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port, receiveTimeout: 3)
        try connection.send("POST /v1/events HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = [UInt8](repeating: 65, count: 600)
        for _ in 0..<2 {
            try connection.send("258\r\n")  // 600 in hex
            try connection.send(chunk + Array("\r\n".utf8))
            usleep(20_000)  // separate reads, so the cap is crossed while the upload is going on
        }
        // libmicrohttpd 0.9.75 cannot answer in the middle of a body: the 413 comes at its end.
        try connection.send("0\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 413)
        #expect(response.text == "{\"error\":\"request body exceeds 1000 bytes\"}")
        #expect(response.header("connection")?.lowercased() == "close")
        #expect(response.values("x-content-type-options") == ["nosniff"])
        #expect(connection.waitForClose())
        #expect(called.value == false)
        #expect(told.value == ["413 /v1/events"])
    }

    /// With a cap above 64 KiB the discard allowance equals the cap: the bytes already buffered
    /// when the body crosses it must not count as discarded, or the next piece looks like a
    /// body going on forever and the connection is dropped unanswered.
    @Test func chunkedBodySlightlyOverTheDefaultCapIsAnswered413() throws {
        let told = Locked<[String]>([])
        let server = try HTTPServer.forTesting({
            $0.maxBodyBytes = 1 << 20
            $0.defaultHeaders = Self.defaults + [(name: "Content-Security-Policy", value: "default-src 'self'")]
            $0.serverAnswered = { path, status in told.withLock { $0.append("\(status) \(path)") } }
        }) { _ in .text("should not run") }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port, receiveTimeout: 5)
        try connection.send("POST /v1/events HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        // 1.1 MB in 50,000-byte chunks: far more pieces than libmicrohttpd reads at once.
        let chunk = Array("c350\r\n".utf8) + [UInt8](repeating: 65, count: 50_000) + Array("\r\n".utf8)
        for _ in 0..<22 {
            try connection.send(chunk)
        }
        try connection.send("0\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 413)
        #expect(response.text == "{\"error\":\"request body exceeds 1048576 bytes\"}")
        #expect(response.header("connection")?.lowercased() == "close")
        #expect(response.values("x-content-type-options") == ["nosniff"])
        #expect(response.values("content-security-policy") == ["default-src 'self'"])
        #expect(connection.waitForClose())
        #expect(told.value == ["413 /v1/events"])
    }

    @Test func endlessChunkedBodyOverTheCapIsCutOff() throws {
        let server = try HTTPServer.forTesting({ $0.maxBodyBytes = 1_000 }) { _ in .text("should not run") }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port, receiveTimeout: 3)
        try connection.send("POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        // 200 KB, far past the cap plus what the server is willing to discard (64 KiB).
        var sendFailed = false
        for _ in 0..<200 where !sendFailed {
            do {
                try connection.send("3e8\r\n" + String(repeating: "x", count: 1_000) + "\r\n")
            } catch {
                sendFailed = true
            }
        }
        #expect(sendFailed || connection.waitForClose())
    }

    @Test func silentConnectionIsClosedAfterTheTimeout() throws {
        let server = try HTTPServer.forTesting({ $0.connectionTimeoutSeconds = 1 }) { _ in .text("ok") }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port, receiveTimeout: 5)
        let start = DispatchTime.now()
        #expect(connection.waitForClose())
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        #expect(elapsed > 0.5)
        #expect(elapsed < 4)
    }

    @Test func connectionsBeyondTheLimitAreClosed() throws {
        let server = try HTTPServer.forTesting({ $0.maxConnections = 4 }) { _ in .text("ok") }
        defer { server.stop() }
        // Four connections, each proven accepted by a keep-alive answer, and kept open.
        var open: [RawConnection] = []
        for _ in 0..<4 {
            let connection = try RawConnection(port: server.port, receiveTimeout: 3)
            #expect(try connection.get("/").status == 200)
            open.append(connection)
        }
        // The fifth: the kernel may complete the handshake, but the server closes it unanswered.
        let fifth: Result<RawResponse, any Error> = Result {
            try RawConnection(port: server.port, receiveTimeout: 3).get("/")
        }
        switch fifth {
        case .success(let response):
            Issue.record("5th connection was answered \(response.status)")
        case .failure(let error):
            #expect(error as? RawConnection.Failure != .timedOut, "5th connection hung instead of being closed")
        }
        // The four are still served.
        for connection in open {
            #expect(try connection.get("/").status == 200)
        }
        // Once one closes, a new connection is served again (the server notices the close asynchronously).
        open.removeLast()
        var servedAgain = false
        for _ in 0..<100 where !servedAgain {
            if let response = try? RawConnection(port: server.port, receiveTimeout: 3).get("/") {
                servedAgain = response.status == 200
            } else {
                usleep(20_000)
            }
        }
        #expect(servedAgain)
    }

    @Test func perIPLimitClosesExtraConnectionsFromOneAddress() throws {
        let server = try HTTPServer.forTesting({ $0.maxConnectionsPerIP = 2 }) { _ in .text("ok") }
        defer { server.stop() }
        let first = try RawConnection(port: server.port, receiveTimeout: 3)
        let second = try RawConnection(port: server.port, receiveTimeout: 3)
        #expect(try first.get("/").status == 200)
        #expect(try second.get("/").status == 200)
        #expect(throws: RawConnection.Failure.self) {
            try RawConnection(port: server.port, receiveTimeout: 3).get("/")
        }
    }

    @Test func blockedHandlerDoesNotStallManyConcurrentClients() throws {
        let release = DispatchSemaphore(value: 0)
        let blockedEntered = DispatchSemaphore(value: 0)
        let server = try HTTPServer.forTesting { request in
            if request.path == "/block" {
                blockedEntered.signal()
                // Bounded so a broken test cannot hang the suite.
                _ = release.wait(timeout: .now() + 10)
                return .text("released")
            }
            return .text("echo \(request.path)")
        }
        defer { server.stop() }

        let blocked = try RawConnection(port: server.port, receiveTimeout: 15)
        try blocked.send("GET /block HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(blockedEntered.wait(timeout: .now() + 5) == .success)

        let threads = 64, requestsPerThread = 20
        let answered = Locked(0)
        let failures = Locked<[String]>([])
        let finished = Concurrently.run(threads: threads, timeout: 10) { thread in
            do {
                // Half the clients reuse one connection, half open one per request.
                var connection = try RawConnection(port: server.port)
                for request in 0..<requestsPerThread {
                    if thread % 2 == 1 && request > 0 {
                        connection = try RawConnection(port: server.port)
                    }
                    let path = "/t\(thread)/r\(request)"
                    let response = try connection.get(path)
                    if response.status == 200 && response.text == "echo \(path)" {
                        answered.withLock { $0 += 1 }
                    } else {
                        failures.withLock { $0.append("\(path): \(response.status) \(response.text)") }
                    }
                }
            } catch {
                failures.withLock { $0.append("thread \(thread): \(error)") }
            }
        }
        #expect(finished)
        #expect(failures.value.isEmpty, "\(failures.value.prefix(5))")
        #expect(answered.value == threads * requestsPerThread)

        // The blocked request was still waiting all along; it completes once released.
        release.signal()
        let response = try blocked.readResponse()
        #expect(response.text == "released")
    }
}
