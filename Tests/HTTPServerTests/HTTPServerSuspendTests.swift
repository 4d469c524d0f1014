import Dispatch
import Foundation
@testable import HTTPServer
import Testing

/// Live tests of deferred answers (``HTTPDeferringHandler``): a request whose handler answers
/// later has its connection suspended, holding no polling thread, and is resumed by the answer.
@Suite struct HTTPServerSuspendTests {
    /// A server with one polling thread whose handler answers `/now…` at once and keeps the
    /// responder of `/later…` for the test to answer.
    struct Fixture {
        let server: HTTPServer
        let waiting: Locked<[String: HTTPResponder]>

        init(_ configure: (inout HTTPServer.Configuration) -> Void = { _ in }) throws {
            let waiting = Locked<[String: HTTPResponder]>([:])
            var configuration = HTTPServer.Configuration()
            configuration.connectionTimeoutSeconds = 5
            configuration.shutdownGracePeriodSeconds = 5
            configuration.threadPoolSize = 1
            configure(&configuration)
            server = try HTTPServer(configuration: configuration, answering: { request, responder in
                if request.path.hasPrefix("/later") {
                    waiting.withLock { $0[request.path] = responder }
                } else {
                    responder.respond(.text(request.path))
                }
            })
            self.waiting = waiting
        }

        /// Waits until the handler holds the responder of `path`.
        func responder(_ path: String, seconds: Double = 5) -> HTTPResponder? {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if let responder = waiting.withLock({ $0[path] }) { return responder }
                usleep(2_000)
            }
            return nil
        }

        /// Waits until `condition` holds (true) or `seconds` pass (false).
        func eventually(seconds: Double = 3, _ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if condition() { return true }
                usleep(5_000)
            }
            return condition()
        }
    }

    /// Three requests wait on the one polling thread; meanwhile a fourth connection is served at
    /// once (none of them holds the thread). Each is answered when, and only when, its
    /// responder answers, in the responders' order, not the arrival order; keep-alive is kept.
    @Test func suspendedRequestsAreResumedInTheOrderAnswered() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connections = try (0..<3).map { _ in try RawConnection(port: fixture.server.port, receiveTimeout: 5) }
        for (i, connection) in connections.enumerated() {
            try connection.send("GET /later\(i) HTTP/1.1\r\nHost: test\r\n\r\n")
        }
        let responders = (0..<3).map { fixture.responder("/later\($0)") }
        #expect(responders.allSatisfy { $0 != nil })
        #expect(fixture.server.suspendedRequests == 3)
        #expect(try RawConnection(port: fixture.server.port, receiveTimeout: 2).get("/now").text == "/now",
                "a connection was not served while three requests waited on the only polling thread")
        for connection in connections {
            #expect(connection.readResponse(seconds: 0.2) == nil, "answered before its handler answered")
        }
        for i in [2, 0, 1] {
            responders[i]?.respond(.text("answer \(i)"))
            #expect(connections[i].readResponse(seconds: 3)?.text == "answer \(i)")
            for j in 0..<3 where j != i && !([2, 0, 1].prefix { $0 != i }).contains(j) {
                #expect(connections[j].readResponse(seconds: 0.1) == nil, "\(j) answered with \(i)'s answer")
            }
            // A second answer from the same responder is ignored.
            responders[i]?.respond(.text("again"))
        }
        for (i, connection) in connections.enumerated() {
            #expect(try connection.get("/now\(i)").text == "/now\(i)", "keep-alive lost after a resume")
        }
        #expect(fixture.server.suspendedRequests == 0)
        #expect(fixture.eventually { fixture.server.requestsInFlight == 0 })
    }

    /// A client that goes away while its request is suspended: the answer, given afterwards,
    /// goes nowhere; the request, its connection and its registration are all released.
    @Test func aClientGoneWhileSuspendedLeavesNothingBehind() throws {
        let fixture = try Fixture()
        defer { fixture.server.stop() }
        let connection = try RawConnection(port: fixture.server.port)
        try connection.send("POST /later HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhello")
        let responder = try #require(fixture.responder("/later"))
        connection.close()
        usleep(100_000)
        // libmicrohttpd does not watch a suspended connection: it is still there.
        #expect(fixture.server.openConnections == 1)
        responder.respond(.text("too late"))
        #expect(fixture.eventually { fixture.server.openConnections == 0 }, "the connection was never closed")
        #expect(fixture.server.requestsInFlight == 0)
        #expect(fixture.server.suspendedRequests == 0)
        #expect(try RawConnection(port: fixture.server.port).get("/now").text == "/now")
    }

    /// `stop()` with requests suspended: one answered within the grace period gets its answer
    /// (with `Connection: close`); one never answered is closed when the grace period ends, and
    /// the daemon stops (libmicrohttpd would abort the process if a connection were still
    /// suspended). An answer given after the stop is dropped.
    @Test func stopWhileRequestsAreSuspended() throws {
        let fixture = try Fixture { $0.shutdownGracePeriodSeconds = 1 }
        let answered = try RawConnection(port: fixture.server.port, receiveTimeout: 5)
        let abandoned = try RawConnection(port: fixture.server.port, receiveTimeout: 5)
        try answered.send("GET /later-answered HTTP/1.1\r\nHost: test\r\n\r\n")
        try abandoned.send("GET /later-abandoned HTTP/1.1\r\nHost: test\r\n\r\n")
        let first = try #require(fixture.responder("/later-answered"))
        let second = try #require(fixture.responder("/later-abandoned"))
        let server = fixture.server
        let start = Date()
        let stopped = Concurrently.start(threads: 1) { _ in server.stop() }
        usleep(200_000)
        first.respond(.text("in time"))
        let response = answered.readResponse(seconds: 3)
        #expect(response?.text == "in time")
        #expect(response?.header("connection")?.lowercased() == "close")
        #expect(stopped.wait(timeout: .now() + 5) == .success, "stop() did not return")
        let took = Date().timeIntervalSince(start)
        #expect(took >= 0.9 && took < 3, "stop() took \(took) s with a 1 s grace period")
        #expect(abandoned.readUntilClosed(seconds: 2) == ([], true), "the request never answered was not closed unanswered")
        second.respond(.text("after the stop"))
    }

    /// An answer resumes its connection after leaving its request's lock: `stop()` must not stop
    /// the daemon while such a resume is still to be made (libmicrohttpd aborts the process when
    /// stopped with a connection suspended). Here the answer is held between the two.
    @Test func stopWaitsForAResumeUnderWay() throws {
        let entered = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
        let fixture = try Fixture {
            $0.shutdownGracePeriodSeconds = 0.2
            $0.beforeResume = {
                entered.signal()
                proceed.wait()
            }
        }
        let connection = try RawConnection(port: fixture.server.port, receiveTimeout: 5)
        try connection.send("GET /later-held HTTP/1.1\r\nHost: test\r\n\r\n")
        let responder = try #require(fixture.responder("/later-held"))
        let answered = Concurrently.start(threads: 1) { _ in responder.respond(.text("held")) }
        #expect(entered.wait(timeout: .now() + 5) == .success)
        let server = fixture.server
        let stopped = Concurrently.start(threads: 1) { _ in server.stop() }
        #expect(stopped.wait(timeout: .now() + 1) == .timedOut, "stop() returned with a resume still to be made")
        proceed.signal()
        #expect(answered.wait(timeout: .now() + 5) == .success)
        #expect(stopped.wait(timeout: .now() + 5) == .success, "stop() did not return")
        // Resumed before the daemon stopped: answered, or closed unanswered; never left hanging.
        let response = connection.readResponse(seconds: 3)
        #expect(response == nil || response?.text == "held")
    }
}
