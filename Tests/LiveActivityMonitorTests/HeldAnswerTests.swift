import Foundation
import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// A large answer (a booking's file) holds its size of the in-flight budget
/// (`--max-inflight-bytes`) until libmicrohttpd has sent it: clients that ask for large answers
/// and read none cannot make the server keep more than the budget of them.
@Suite(.serialized) struct HeldAnswerTests {
    /// A booking whose NDJSON file is about 5 MB: 8 × 1,000 pushes to one activity.
    static func bigBooking(_ server: TestServer) throws {
        #expect(try server.post(events: [IngestTests.started("big")]).status == 200)
        for batch in 0..<8 {
            let pushes = (0..<1000).map { i in
                Scenario.push("big", "p\(batch)-\(i)", at: TestServer.base - 50 + Double(batch * 1000 + i) / 1000,
                              token: IngestTests.token, content: ["startedAt": TestServer.base - 60])
            }
            #expect(try server.post(events: pushes).status == 200)
        }
    }

    /// Asks for the booking's file on a connection that reads nothing (a 4 KiB receive buffer).
    static func unreadDownload(_ server: TestServer) throws -> RawConnection {
        let c = try RawConnection(port: server.server.port, receiveTimeout: 10, receiveBuffer: 4096)
        try c.send("GET /api/bookings/BK-big?format=ndjson HTTP/1.1\r\nHost: localhost\r\n\r\n")
        return c
    }

    @Test func unreadLargeAnswersHoldTheBudgetUntilSent() throws {
        let server = try TestServer { $0.maxInflightBytes = 12 << 20 }
        defer { server.stop() }
        try Self.bigBooking(server)
        let size = try server.get("/api/bookings/BK-big?format=ndjson").body.count
        #expect(size > 4 << 20 && size <= 6 << 20, "the file is \(size) bytes")

        // Two fit in the budget; a third is refused while they are unread.
        let first = try Self.unreadDownload(server), second = try Self.unreadDownload(server)
        defer { first.close(); second.close() }
        var refused: HTTPClient.Response?
        for _ in 0..<50 {
            let r = try server.get("/api/bookings/BK-big?format=ndjson")
            if r.status == 503 { refused = r; break }
            Thread.sleep(forTimeInterval: 0.1)   // until both unread answers are queued
        }
        #expect(refused?.status == 503)
        #expect(refused?.headers["retry-after"] == "1")
        #expect(refused?.text.contains("too many large answers") == true, "\(refused?.text ?? "")")
        // Small answers are not held.
        #expect(try server.get("/api/activities/big").status == 200)

        // Read whole, an answer gives its part of the budget back.
        let read = try first.readResponse()
        #expect(read.status == 200 && read.body.count == size)
        first.close()
        var served = false
        for _ in 0..<50 where !served {
            served = try server.get("/api/bookings/BK-big?format=ndjson").status == 200
            if !served { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(served)
        // Closed unread, too.
        second.close()
        #expect(try server.post(events: [IngestTests.started("after")]).status == 200)
    }
}
