import Dispatch
import Foundation
import HTTPServer
import Testing

/// Slow clients against `connectionTimeoutSeconds`, which libmicrohttpd alone applies only to
/// silence: a request must arrive whole, and a response be taken, within the limit, however
/// steadily the bytes trickle; a slow handler is never cut off; keep-alive clients are not hurt.
/// Few tests, each doing several things at once: the limit cannot be under a second, and
/// tests that wait hold one of the few threads Swift Testing runs them on.
@Suite struct HTTPServerSlowClientTests {
    static func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    /// On one server with a 1 s limit, at the same time: a request trickling its headers and
    /// one trickling its body, a byte every 200 ms (never silent long enough for an idle
    /// timeout), are cut off at the limit; a keep-alive client asking every 300 ms keeps its
    /// one connection well past the limit; a handler taking 1.6 s is not cut off.
    @Test func slowSendersAreCutOffButNotKeepAliveClientsOrSlowHandlers() throws {
        let server = try HTTPServer.forTesting({ $0.connectionTimeoutSeconds = 1 }) { request in
            if request.path == "/slow" { Thread.sleep(forTimeInterval: 1.6) }
            return .text(request.path)
        }
        defer { server.stop() }
        let slowHandler = Locked<RawResponse?>(nil)
        let slowHandlerDone = DispatchSemaphore(value: 0)
        let port = server.port
        DispatchQueue.global().async {
            slowHandler.withLock { $0 = try? RawConnection(port: port, receiveTimeout: 5).get("/slow") }
            slowHandlerDone.signal()
        }
        let senders = try [
            "GET / HTTP/1.1\r\nHost: test\r\nX-Slow: ",
            "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 100000\r\n\r\n",
        ].map { start in
            let c = try RawConnection(port: port)
            try c.send(start)
            return c
        }
        let keepAlive = try RawConnection(port: port)
        var closedAfter: [Double?] = [nil, nil]
        var answered = 0
        let start = DispatchTime.now()
        while Self.seconds(since: start) < 1.8 || (closedAfter.contains(nil) && Self.seconds(since: start) < 5) {
            for (i, c) in senders.enumerated() where closedAfter[i] == nil {
                do { try c.send("a") } catch { closedAfter[i] = Self.seconds(since: start) }
            }
            if Self.seconds(since: start) < 1.8 {
                let response = try keepAlive.get("/\(answered)")
                #expect(response.text == "/\(answered)", "the keep-alive connection answers in order")
                answered += 1
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        print("trickled requests cut off after " + closedAfter.map { $0.map { String(format: "%.2f s", $0) } ?? "never" }.joined(separator: " and ")
              + "; a keep-alive client got \(answered) answers on one connection meanwhile")
        for after in closedAfter {
            #expect(after != nil, "still open after 5 s of trickling")
            #expect((after ?? 0) > 0.8, "cut off before the limit")
        }
        #expect(answered >= 8)
        #expect(slowHandlerDone.wait(timeout: .now() + 5) == .success)
        #expect(slowHandler.withLock { $0?.text } == "/slow", "the 1.6 s handler was answered")
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
