import Dispatch
import Glibc
import HTTPServer
import Testing

/// The in-flight body budget (`maxInflightBodyBytes`): bodies held at once by all requests are
/// bounded, beyond it 503 with `Retry-After`, and the budget comes back as handlers return.
@Suite struct HTTPServerInflightBudgetTests {
    /// A handler that holds each request until `release` is signalled, so that bodies stay in flight.
    static func holdingServer(budget: Int, held: Locked<Int>, release: DispatchSemaphore) throws -> HTTPServer {
        try HTTPServer.forTesting({ $0.maxBodyBytes = 10_000; $0.maxInflightBodyBytes = budget }) { request in
            held.withLock { $0 += 1 }
            _ = release.wait(timeout: .now() + 5)   // bounded: a regression fails, never hangs
            return .text("\(request.body.count)")
        }
    }

    static func waitUntil(_ condition: () -> Bool) {
        for _ in 0..<500 where !condition() { usleep(10_000) }
    }

    @Test func aDeclaredBodyBeyondTheBudgetIs503AtOnceAndTheBudgetComesBack() throws {
        let held = Locked(0), release = DispatchSemaphore(value: 0)
        let server = try Self.holdingServer(budget: 5_000, held: held, release: release)
        defer { server.stop() }
        // Two bodies of 2,000 bytes are in the handler: 4,000 of 5,000 held.
        let first = try RawConnection(port: server.port), second = try RawConnection(port: server.port)
        for connection in [first, second] {
            try connection.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2000\r\n\r\n")
            try connection.send([UInt8](repeating: 1, count: 2_000))
        }
        Self.waitUntil { held.value == 2 }
        #expect(held.value == 2)
        // A third of 2,000 would hold 6,000: refused from its headers, its body never read.
        let third = try RawConnection(port: server.port, receiveTimeout: 3)
        try third.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2000\r\n\r\n")
        let refused = try third.readResponse()
        #expect(refused.status == 503)
        #expect(refused.header("retry-after") == "1")
        #expect(refused.text.contains("too many request bodies in flight"))
        #expect(third.waitForClose())
        // One of 1,000 still fits.
        let small = try RawConnection(port: server.port)
        try small.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n")
        try small.send([UInt8](repeating: 1, count: 1_000))
        Self.waitUntil { held.value == 3 }
        for _ in 0..<3 { release.signal() }
        #expect(try first.readResponse().text == "2000")
        #expect(try second.readResponse().text == "2000")
        #expect(try small.readResponse().text == "1000")
        // Given back: the same third request now passes.
        let again = try RawConnection(port: server.port)
        try again.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2000\r\n\r\n")
        try again.send([UInt8](repeating: 1, count: 2_000))
        Self.waitUntil { held.value == 4 }
        release.signal()
        #expect(try again.readResponse().text == "2000")
    }

    @Test func aChunkedBodyThatGrowsBeyondTheBudgetIs503WhenItEnds() throws {
        let held = Locked(0), release = DispatchSemaphore(value: 0)
        let server = try Self.holdingServer(budget: 3_000, held: held, release: release)
        defer { server.stop() }
        let first = try RawConnection(port: server.port)
        try first.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2500\r\n\r\n")
        try first.send([UInt8](repeating: 1, count: 2_500))
        Self.waitUntil { held.value == 1 }
        let chunked = try RawConnection(port: server.port, receiveTimeout: 3)
        try chunked.send("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        try chunked.send("3e8\r\n" + String(repeating: "a", count: 1_000) + "\r\n0\r\n\r\n")
        let refused = try chunked.readResponse()
        #expect(refused.status == 503)
        #expect(refused.header("retry-after") == "1")
        #expect(held.value == 1, "the handler never saw the refused request")
        release.signal()
        #expect(try first.readResponse().text == "2500")
    }

    /// What a handler holds beyond its body (`holdInflight`, its `x-hold` bytes here) counts as
    /// bodies do, and comes back with the answer.
    @Test func whatAHandlerHoldsCountsInTheBudgetUntilItAnswers() throws {
        let held = Locked(0), release = DispatchSemaphore(value: 0)
        let server = try HTTPServer.forTesting({ $0.maxBodyBytes = 10_000; $0.maxInflightBodyBytes = 5_000 }) { request in
            guard request.holdInflight(Int(request.header("x-hold") ?? "0")!) else { return .text("refused", status: 503) }
            held.withLock { $0 += 1 }
            _ = release.wait(timeout: .now() + 5)   // bounded: a regression fails, never hangs
            return .text("\(request.body.count)")
        }
        defer { server.stop() }
        func post(_ body: Int, hold: Int, receiveTimeout: Double = 10) throws -> RawConnection {
            let connection = try RawConnection(port: server.port, receiveTimeout: receiveTimeout)
            try connection.send("POST / HTTP/1.1\r\nHost: t\r\nx-hold: \(hold)\r\nContent-Length: \(body)\r\n\r\n")
            try connection.send([UInt8](repeating: 1, count: body))
            return connection
        }
        // 2,000 of 5,000 held by a body; 1,000 more and 2,500 held by its handler would make 5,500.
        let first = try post(2_000, hold: 0)
        Self.waitUntil { held.value == 1 }
        let refused = try post(1_000, hold: 2_500, receiveTimeout: 3)
        #expect(try refused.readResponse().status == 503)
        // 1,000 and 1,500 held make 4,500: it fits.
        let second = try post(1_000, hold: 1_500)
        Self.waitUntil { held.value == 2 }
        #expect(held.value == 2)
        release.signal(); release.signal()
        #expect(try first.readResponse().text == "2000")
        #expect(try second.readResponse().text == "1000")
        // Given back with the answers: 2,000 and 2,900 held fit again, and so do they twice over alone.
        let again = try post(2_000, hold: 2_900)
        Self.waitUntil { held.value == 3 }
        release.signal()
        #expect(try again.readResponse().text == "2000")
        let alone = try post(2_000, hold: 9_000)
        Self.waitUntil { held.value == 4 }
        release.signal()
        #expect(try alone.readResponse().text == "2000")
    }

    @Test func aRequestAloneAlwaysFitsWhateverTheBudget() throws {
        let server = try HTTPServer.forTesting({ $0.maxBodyBytes = 10_000; $0.maxInflightBodyBytes = 100 }) { request in
            .text("\(request.body.count)")
        }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        for _ in 0..<3 {
            try connection.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n")
            try connection.send([UInt8](repeating: 1, count: 5_000))
            #expect(try connection.readResponse().text == "5000")
        }
    }
}
