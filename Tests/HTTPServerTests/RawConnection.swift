import Glibc

/// A blocking HTTP/1.1 client over one TCP socket, so tests control exactly what goes on
/// the wire: keep-alive, partial requests, trickled bodies, silence.
final class RawConnection {
    enum Failure: Error, Equatable {
        case connect(errno: Int32)
        case send(errno: Int32)
        /// The peer closed (EOF or reset) before a whole response arrived.
        case closed
        /// Nothing arrived within the receive timeout.
        case timedOut
        case malformed(String)
    }

    private let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to `host` (IPv4 or IPv6 literal) : `port`; reads give up after `receiveTimeout` s.
    init(host: String = "127.0.0.1", port: Int, receiveTimeout: Double = 5) throws {
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

    deinit {
        Glibc.close(fd)
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
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
    func get(_ path: String, headers: [String] = []) throws -> RawResponse {
        try send("GET \(path) HTTP/1.1\r\nHost: test\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n")
        return try readResponse()
    }

    /// Reads one response: status line, headers, and a body of `Content-Length` bytes.
    func readResponse() throws -> RawResponse {
        let headerEnd = try fill { buffer in
            buffer.indices.dropLast(3).first { i in
                buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10
            }.map { $0 + 4 }
        }
        let head = String(decoding: pending[..<headerEnd], as: UTF8.self)
        pending.removeFirst(headerEnd)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: true)
        guard !lines.isEmpty else { throw Failure.malformed(head) }
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure.malformed(head) }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw Failure.malformed(head) }
            headers.append((name: line[..<colon].lowercased(),
                            value: line[line.index(after: colon)...].trimmingSpaces()))
        }
        let length = headers.first { $0.name == "content-length" }.flatMap { Int($0.value) } ?? 0
        _ = try fill { $0.count >= length ? length : nil }
        let body = Array(pending[..<length])
        pending.removeFirst(length)
        return RawResponse(status: status, headers: headers, body: body)
    }

    /// One `recv` of at most `count` bytes, bypassing the response buffer: a slow reader.
    /// Returns how many arrived; 0 once the peer has closed (or reset) the connection.
    func receive(upTo count: Int) throws -> Int {
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
    func waitForClose() -> Bool {
        var byte: UInt8 = 0
        while true {
            let count = recv(fd, &byte, 1, 0)
            if count == 0 { return true }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && errno == ECONNRESET { return true }
            return false
        }
    }

    /// Receives until `complete` finds what it needs in the buffered bytes.
    private func fill(until complete: ([UInt8]) -> Int?) throws -> Int {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            if let found = complete(pending) { return found }
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
}

private extension Substring {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
