import Foundation
import Glibc

/// One TCP connection to a server on loopback, driven byte by byte, so that a test controls
/// exactly what goes on the wire: keep-alive, partial requests, trickled bodies, silence,
/// slowloris, oversized declarations, connection floods; everything `HTTPClient` is too polite
/// to do.
///
/// Two ways to read: `readResponse()` blocks up to the receive timeout and throws what went
/// wrong; `readResponse(seconds:)`, `isClosed(within:)` and `readUntilClosed(seconds:)` poll up
/// to a deadline of their own and answer what they saw.
public final class RawConnection {
    public enum Failure: Error, Equatable {
        case connect(errno: Int32)
        case send(errno: Int32)
        /// The peer closed (end of stream or reset) before a whole response arrived.
        case closed
        /// Nothing arrived within the receive timeout.
        case timedOut
        case malformed(String)
    }

    private var fd: Int32
    /// Bytes received and not yet taken by a read.
    private var pending: [UInt8] = []

    /// Connects to `host` (IPv4 or IPv6 literal) : `port`; blocking reads give up after
    /// `receiveTimeout` seconds. `receiveBuffer`: the socket's receive buffer in bytes (a client
    /// that reads slowly, or not at all, takes little of an answer).
    public init(host: String = "127.0.0.1", port: Int, receiveTimeout: Double = 5, receiveBuffer: Int? = nil) throws {
        var v4 = in_addr()
        var v6 = in6_addr()
        var storage = sockaddr_storage()
        let length: Int
        let family: Int32
        if inet_pton(AF_INET, host, &v4) == 1 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr = v4
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in.self) }
            length = MemoryLayout<sockaddr_in>.size
            family = AF_INET
        } else {
            precondition(inet_pton(AF_INET6, host, &v6) == 1, "not an address literal: \(host)")
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            address.sin6_addr = v6
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in6.self) }
            length = MemoryLayout<sockaddr_in6>.size
            family = AF_INET6
        }
        // A local until connected: once `fd` is set the object is whole, and a throw would run
        // `deinit`, closing the number a second time, by then perhaps a server's socket in a
        // test running alongside (libmicrohttpd aborts when its close fails).
        let s = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw Failure.connect(errno: errno) }
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout - receiveTimeout.rounded(.down)) * 1e6))
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(s, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let result = withUnsafeBytes(of: storage) { raw in
            Glibc.connect(s, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(length))
        }
        if result != 0 {
            let code = errno
            Glibc.close(s)
            throw Failure.connect(errno: code)
        }
        fd = s
    }

    deinit { close() }

    /// Closes the connection now (also done when the object goes away).
    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    // MARK: Sending

    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends every byte; throws once the server has closed or reset the connection.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a server that already closed must not kill the test with SIGPIPE.
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                throw Failure.send(errno: errno)
            }
            offset += sent
        }
    }

    /// Sends `GET path` with keep-alive and returns the response.
    public func get(_ path: String, headers: [String] = []) throws -> RawResponse {
        try send("GET \(path) HTTP/1.1\r\nHost: test\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n")
        return try readResponse()
    }

    // MARK: Blocking reads (up to the receive timeout)

    /// Reads one whole response: status line, headers, and a body of `Content-Length` bytes.
    public func readResponse() throws -> RawResponse {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            if let head = try RawResponse.Head(pending), pending.count >= head.end {
                return take(head)
            }
            let count = recv(fd, &chunk, chunk.count, 0)
            if count > 0 {
                pending.append(contentsOf: chunk[..<count])
            } else if count == 0 || errno == ECONNRESET {
                throw Failure.closed
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                throw Failure.timedOut
            } else if errno != EINTR {
                throw Failure.closed
            }
        }
    }

    /// One `recv` of at most `count` bytes, bypassing the response buffer: a slow reader.
    /// Returns how many arrived; 0 once the peer has closed (or reset) the connection.
    public func receive(upTo count: Int) throws -> Int {
        var chunk = [UInt8](repeating: 0, count: count)
        while true {
            let n = recv(fd, &chunk, count, 0)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return 0 }
            throw errno == EAGAIN || errno == EWOULDBLOCK ? Failure.timedOut : Failure.closed
        }
    }

    /// Waits until the peer closes the connection; true if it did within the receive timeout,
    /// false if data arrived or the wait timed out.
    public func waitForClose() -> Bool {
        var byte: UInt8 = 0
        while true {
            let count = recv(fd, &byte, 1, 0)
            if count == 0 { return true }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && errno == ECONNRESET { return true }
            return false
        }
    }

    // MARK: Reads up to a deadline

    /// One response, waiting up to `seconds` for all of it: nil if no whole head arrives in
    /// time; if the connection ends or time runs out mid-body, what arrived (`isComplete` false).
    public func readResponse(seconds: Double) -> RawResponse? {
        let deadline = Date().addingTimeInterval(seconds)
        var head: RawResponse.Head?
        do {
            while true {
                head = try RawResponse.Head(pending)
                if let head, pending.count >= head.end { break }
                guard case .data(let bytes) = poll(until: deadline) else { break }
                pending += bytes
            }
        } catch {
            return nil  // not an HTTP response: none to give
        }
        return head.map(take)
    }

    /// The response `head` starts, taken out of the buffer (with what arrived of its body).
    private func take(_ head: RawResponse.Head) -> RawResponse {
        let response = head.response(in: pending)
        pending.removeFirst(min(head.end, pending.count))
        return response
    }

    /// Whether the server closes the connection (end of stream or reset) within `seconds`.
    /// Bytes it sends before closing are read and discarded.
    public func isClosed(within seconds: Double) -> Bool {
        pending = []
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            switch poll(until: deadline) {
            case .data: continue
            case .closed: return true
            case .timedOut: return false
            }
        }
    }

    /// Everything the server sends until it closes the connection or `seconds` pass, and
    /// whether it closed.
    public func readUntilClosed(seconds: Double) -> (bytes: [UInt8], closed: Bool) {
        var bytes = pending
        pending = []
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            switch poll(until: deadline) {
            case .data(let more): bytes += more
            case .closed: return (bytes, true)
            case .timedOut: return (bytes, false)
            }
        }
    }

    private enum Polled {
        case data([UInt8])
        case closed
        case timedOut
    }

    /// Waits until bytes arrive, the peer closes, or `deadline` passes.
    private func poll(until deadline: Date) -> Polled {
        while true {
            let left = deadline.timeIntervalSinceNow
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = Glibc.poll(&p, 1, Int32(max(0, left) * 1000))
            if ready > 0 {
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n > 0 { return .data(Array(chunk[0..<n])) }
                if n == 0 || (errno != EAGAIN && errno != EINTR) { return .closed }
                continue
            }
            if left <= 0 { return .timedOut }
        }
    }
}
