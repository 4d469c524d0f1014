import Foundation
import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// Hostile clients against the real server: slow senders, connection floods, huge bodies.
/// Each is refused or cut off while a well-behaved client keeps being served.
@Suite struct AbuseTests {
    /// 6 always; `LAM_LONG_TESTS=1` runs 400 (under the default limit of 512 connections).
    static let slowConnections = ProcessInfo.processInfo.environment["LAM_LONG_TESTS"] == "1" ? 400 : 6

    /// Slowloris: requests whose headers, or body, arrive one byte every 250 ms (inside a 1 s
    /// idle timeout, so an idle timeout alone never fires) are closed within a few seconds, while
    /// a normal client keeps getting quick answers.
    @Test func slowHeadersAndBodiesAreCutOffWhileOthersAreServed() throws {
        let server = try TestServer { $0.connectionTimeoutSeconds = 1 }
        defer { server.stop() }
        let port = server.server.port
        var slow: [RawConnection] = []
        for i in 0..<Self.slowConnections {
            let c = try RawConnection(port: port)
            if i % 2 == 0 {
                try c.send("GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
            } else {
                try c.send("POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n[")
            }
            slow.append(c)
        }
        let start = Date()
        var closedAfter = [Double?](repeating: nil, count: slow.count)
        var served = 0, slowestAnswer = 0.0
        while Date().timeIntervalSince(start) < 6, closedAfter.contains(where: { $0 == nil }) {
            for (i, c) in slow.enumerated() where closedAfter[i] == nil {
                if (try? c.send("a")) == nil || c.isClosed(within: 0) { closedAfter[i] = Date().timeIntervalSince(start) }
            }
            let asked = Date()
            let r = try server.get("/-/healthy")
            slowestAnswer = max(slowestAnswer, Date().timeIntervalSince(asked))
            #expect(r.status == 200)
            served += 1
            Thread.sleep(forTimeInterval: 0.25)
        }
        let cutOff = closedAfter.compactMap { $0 }
        print("slowloris: \(cutOff.count)/\(slow.count) slow connections cut off after "
              + String(format: "%.2f–%.2f s", cutOff.min() ?? 0, cutOff.max() ?? 0)
              + "; \(served) normal requests served meanwhile, slowest \(String(format: "%.3f s", slowestAnswer))")
        #expect(cutOff.count == slow.count, "slow connections still open after 6 s: \(closedAfter)")
        #expect(cutOff.allSatisfy { $0 <= 3.5 }, "cut off too late: \(cutOff)")
        #expect(slowestAnswer < 0.5)
        try IngestTests.expectNothingStored(server)
    }

    /// More connections than `maxConnections` are closed at once, without disturbing the ones
    /// already open; once those close, new clients are served again.
    @Test func connectionsOverTheLimitAreRefusedAndServiceResumes() throws {
        let limit = 4, extra = 20
        let log = LogLines()
        let server = try TestServer {
            $0.maxConnections = limit
            $0.log = { log.append($0) }
        }
        defer { server.stop() }
        server.client.close()
        let port = server.server.port
        let request = "GET /-/healthy HTTP/1.1\r\nHost: localhost\r\n\r\n"
        var held: [RawConnection] = []
        for _ in 0..<limit {
            let c = try RawConnection(port: port)
            try c.send(request)
            #expect(c.readResponse(seconds: 2)?.status == 200)
            held.append(c)
        }
        var refused = 0
        let started = Date()
        for _ in 0..<extra {
            // The kernel completes the handshake; the server then closes the connection unanswered.
            guard let c = try? RawConnection(port: port) else { refused += 1; continue }
            _ = try? c.send(request)  // it may be closed already: what comes back is what counts
            if c.readUntilClosed(seconds: 2) == ([], true) { refused += 1 }
        }
        let refusalSeconds = Date().timeIntervalSince(started)
        print("connection limit \(limit): \(refused)/\(extra) connections over it refused, in \(String(format: "%.3f s", refusalSeconds))")
        #expect(refused == extra)
        let reports = log.value.filter { $0.contains("connection limit") }
        #expect(!reports.isEmpty && reports.count <= extra, "libmicrohttpd's refusals reach the log: \(log.value)")
        for c in held {
            try c.send(request)
            #expect(c.readResponse(seconds: 2)?.status == 200, "a connection open before the flood still works")
        }
        held.forEach { $0.close() }
        var status: Int?
        let deadline = Date().addingTimeInterval(3)
        while status != 200, Date() < deadline {
            status = try? HTTPClient(port: port, timeoutSeconds: 2).request("GET", "/-/healthy").status
            if status != 200 { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(status == 200, "served again once the held connections closed")
    }

    static let hundredMegabytes = 100 << 20
    static let oneMegabyteOfSpaces = [UInt8](repeating: 0x20, count: 1 << 20)

    /// Sends up to 100 MB in 1 MiB pieces until the server stops taking them; bytes sent.
    static func pushHundredMegabytes(_ c: RawConnection, chunked: Bool) -> Int {
        var sent = 0
        let piece = chunked ? Array("100000\r\n".utf8) + oneMegabyteOfSpaces + Array("\r\n".utf8) : oneMegabyteOfSpaces
        while sent < hundredMegabytes, (try? c.send(piece)) != nil { sent += oneMegabyteOfSpaces.count }
        return sent
    }

    /// The real binary, so that its memory is measured alone (/proc/PID/status), not along
    /// with the tests running in parallel in this process.
    static func withRealServer(_ body: (ServeProcess) throws -> Void) throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let serve = try ServeProcess(["--db", dir + "/db.sqlite"])
        defer { _ = serve.stop() }
        // Warm up (first request, first scrape) so one-time allocations are not counted.
        _ = try HTTPClient(port: serve.port).request("GET", "/metrics")
        try body(serve)
        let metrics = try HTTPClient(port: serve.port).request("GET", "/metrics").text
        #expect(MetricsText.value(of: "liveactivity_ingest_events_total{type=\"activity.started\"}", in: metrics) == 0)
    }

    /// A declared 100 MB body is answered 413 from the headers alone (no `100 Continue`, nothing
    /// read); a client that sends it anyway is cut off after a few megabytes; the server's peak
    /// memory does not move.
    @Test(arguments: [false, true])
    func hundredMegabyteBodyIsRefusedBeforeItIsRead(expectContinue: Bool) throws {
        try Self.withRealServer { serve in
            let before = serve.memory()
            let c = try RawConnection(port: serve.port)
            try c.send("POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                       + "Content-Length: \(Self.hundredMegabytes)\r\n" + (expectContinue ? "Expect: 100-continue\r\n" : "") + "\r\n")
            let r = c.readResponse(seconds: 2)
            #expect(r?.status == 413)
            #expect(r?.headers["connection"]?.lowercased() == "close")
            #expect(r?.headers["content-type"] == "application/json")
            #expect(r?.headers["x-content-type-options"] == "nosniff")
            #expect(r?.text == #"{"error":"request body exceeds 1048576 bytes"}"#)
            let sent = Self.pushHundredMegabytes(c, chunked: false)
            let after = serve.memory()
            print("100 MB declared body (Expect: 100-continue \(expectContinue)): 413 before the body; the server took "
                  + "\(sent >> 20) MiB of it before closing; server peak RSS \(before.peak >> 10) → \(after.peak >> 10) KiB")
            #expect(sent < 16 << 20)
            #expect(after.peak - before.peak < 8 << 20)
        }
    }

    /// A chunked body has no length to refuse up front: the server stops buffering at the limit,
    /// discards up to one more limit's worth, then closes; its peak memory barely moves.
    @Test func hundredMegabyteChunkedBodyIsCutOff() throws {
        try Self.withRealServer { serve in
            let before = serve.memory()
            let c = try RawConnection(port: serve.port)
            try c.send("POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            let sent = Self.pushHundredMegabytes(c, chunked: true)
            let closed = c.isClosed(within: 2)
            let after = serve.memory()
            print("100 MB chunked body: the server took \(sent >> 20) MiB before closing; "
                  + "server peak RSS \(before.peak >> 10) → \(after.peak >> 10) KiB")
            #expect(closed)
            #expect(sent < 16 << 20)
            #expect(after.peak - before.peak < 8 << 20)
        }
    }
}
