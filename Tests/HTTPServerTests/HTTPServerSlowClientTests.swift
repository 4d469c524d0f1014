import Dispatch
import Foundation
import HTTPServer
import Testing

/// Slow clients against `connectionTimeoutSeconds`, which libmicrohttpd alone applies only to
/// silence: a request must arrive whole, and a response be taken, within the limit, however
/// steadily the bytes trickle; a slow handler is never cut off; keep-alive clients are not hurt.
@Suite struct HTTPServerSlowClientTests {
    static func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    /// Sends one byte every 200 ms (never silent for the 1 s limit); seconds until the server
    /// closed, or nil if it had not after `within` seconds.
    static func trickle(_ connection: RawConnection, within: Double) -> Double? {
        let start = DispatchTime.now()
        while seconds(since: start) < within {
            do { try connection.send("a") } catch { return seconds(since: start) }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return nil
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\nHost: test\r\nX-Slow: ",
        "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 100000\r\n\r\n",
    ])
    func trickledRequestIsCutOffAtTheLimit(_ start: String) throws {
        let server = try HTTPServer.forTesting({ $0.connectionTimeoutSeconds = 1 }) { _ in .text("ok") }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send(start)
        let closedAfter = Self.trickle(connection, within: 5)
        print("trickled request cut off after \(closedAfter.map { String(format: "%.2f s", $0) } ?? "never")")
        #expect(closedAfter != nil, "still open after 5 s of trickling")
        #expect((closedAfter ?? 0) > 0.8, "cut off before the limit: \(closedAfter ?? 0)")
        #expect(try RawConnection(port: server.port).get("/").status == 200)
    }

    @Test func slowHandlerIsNotTimedOut() throws {
        let server = try HTTPServer.forTesting({ $0.connectionTimeoutSeconds = 1 }) { _ in
            Thread.sleep(forTimeInterval: 1.6)
            return .text("slow but fine")
        }
        defer { server.stop() }
        let response = try RawConnection(port: server.port, receiveTimeout: 5).get("/")
        #expect(response.status == 200)
        #expect(response.text == "slow but fine")
    }

    /// The limit applies to each request, not to the connection: a keep-alive client asking
    /// every 300 ms keeps its one connection for well beyond it.
    @Test func keepAliveClientKeepsItsConnectionPastTheLimit() throws {
        let server = try HTTPServer.forTesting({ $0.connectionTimeoutSeconds = 1 }) { request in .text(request.path) }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        let start = DispatchTime.now()
        var answered = 0
        while Self.seconds(since: start) < 1.6 {
            let response = try connection.get("/\(answered)")
            #expect(response.text == "/\(answered)")
            answered += 1
            Thread.sleep(forTimeInterval: 0.3)
        }
        #expect(answered >= 5)
    }

    /// Slow readers: two clients holding both connection slots by reading a 24 MiB response a
    /// little at a time are cut off at the limit, and a third client gets in.
    @Test func slowReadersAreCutOffAndFreeTheirSlots() throws {
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 24 << 20)
        let server = try HTTPServer.forTesting({ $0.connectionTimeoutSeconds = 1; $0.maxConnections = 2 }) { request in
            request.path == "/big" ? HTTPResponse(status: 200, headers: [], body: body) : .text("ok")
        }
        defer { server.stop() }
        let readers = try (0..<2).map { _ in try RawConnection(port: server.port) }
        for reader in readers { try reader.send("GET /big HTTP/1.1\r\nHost: test\r\n\r\n") }
        let start = DispatchTime.now()
        var servedAfter: Double?
        var received = [0, 0]
        while servedAfter == nil, Self.seconds(since: start) < 6 {
            for (i, reader) in readers.enumerated() { received[i] += (try? reader.receive(upTo: 128 << 10)) ?? 0 }
            if let response = try? RawConnection(port: server.port, receiveTimeout: 0.5).get("/"), response.status == 200 {
                servedAfter = Self.seconds(since: start)
            }
            // About 2.5 MB/s each: steady enough that libmicrohttpd's idle timeout never fires
            // (reading much slower lets the kernel's large send buffer look idle to it).
            Thread.sleep(forTimeInterval: 0.05)
        }
        print("slow readers: a third client was served after \(servedAfter.map { String(format: "%.2f s", $0) } ?? "never"), "
              + "the readers having taken \(received.map { "\($0 >> 20) MiB" }.joined(separator: " and ")) of 24 MiB")
        #expect(servedAfter != nil, "slow readers still hold every connection after 6 s")
        #expect((servedAfter ?? 0) > 0.5, "served at once: the readers never held the slots")
    }
}
