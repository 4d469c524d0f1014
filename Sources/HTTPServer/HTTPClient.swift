#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A minimal blocking HTTP/1.1 client over one keep-alive TCP connection, for loopback use:
/// the demo traffic generator, tests and benchmarks. Not for the open internet (no TLS, no
/// redirects). One instance is used by one thread at a time.
public final class HTTPClient {
    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]   // names lowercased
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let host: String
    private let port: Int
    /// The `Host` header's value: `host:port`, or `[host]:port` for an IPv6 literal.
    private let authority: String
    private var fd: Int32 = -1
    private var buffer: [UInt8] = []
    public var timeoutSeconds: Int

    /// - Parameter host: an IPv4 or IPv6 address literal (`::1`, with or without brackets), or
    ///   `localhost` for 127.0.0.1; names are not resolved.
    public init(host: String = "127.0.0.1", port: Int, timeoutSeconds: Int = 30) {
        var literal = Substring(host)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        self.host = String(literal)
        self.port = port
        authority = literal.contains(":") ? "[\(literal)]:\(port)" : "\(literal):\(port)"
        self.timeoutSeconds = timeoutSeconds
    }

    deinit { close() }

    public func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
        buffer = []
    }

    /// Sends one request; reconnects once if the kept-alive connection was closed by the server.
    public func request(_ method: String, _ path: String, headers: [(String, String)] = [],
                        body: [UInt8] = []) throws(Failure) -> Response {
        do {
            return try exchange(method, path, headers, body)
        } catch {
            close()
            return try exchange(method, path, headers, body)
        }
    }

    private func exchange(_ method: String, _ path: String, _ headers: [(String, String)],
                          _ body: [UInt8]) throws(Failure) -> Response {
        if fd < 0 { try connect() }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(authority)\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try send(Array(head.utf8) + body)
        return try readResponse(method: method)
    }

    private func connect() throws(Failure) {
        let address: SocketAddress
        do {
            address = try SocketAddress(host: host == "localhost" ? "127.0.0.1" : host, port: port)
        } catch {
            throw Failure(description: "not an IPv4 or IPv6 address: \(host)")
        }
        let s = socket(address.family, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let rc = address.withSockaddrPointer { Glibc.connect(s, $0, address.length) }
        guard rc == 0 else {
            let code = errno
            _ = Glibc.close(s)
            throw Failure(description: "cannot connect to \(address.description): errno \(code)")
        }
        fd = s
    }

    private func send(_ bytes: [UInt8]) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, sendWithoutSignal) }
            guard n > 0 else { throw Failure(description: "send failed: errno \(errno)") }
            offset += n
        }
    }

    /// Reads more bytes into the buffer; false at end of stream.
    private func fill() throws(Failure) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 { throw Failure(description: "recv failed: errno \(errno)") }
        if n == 0 { return false }
        buffer += chunk[0..<n]
        return true
    }

    private func readResponse(method: String) throws(Failure) -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = firstRange(of: separator)
            if headerEnd == nil, !(try fill()) { throw Failure(description: "connection closed before a response") }
        }
        let headText = String(decoding: buffer[0..<headerEnd!], as: UTF8.self)
        buffer.removeFirst(headerEnd! + 4)
        var lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: " ")
        }
        var body: [UInt8] = []
        if method == "HEAD" || status == 204 || status == 304 {
        } else if let length = headers["content-length"].flatMap({ Int($0) }) {
            while buffer.count < length {
                if !(try fill()) { throw Failure(description: "connection closed mid-body") }
            }
            body = Array(buffer[0..<length])
            buffer.removeFirst(length)
        } else if headers["transfer-encoding"]?.lowercased() == "chunked" {
            body = try readChunked()
        } else {
            while try fill() {}
            body = buffer
            buffer = []
        }
        if headers["connection"]?.lowercased() == "close" { close() }
        return Response(status: status, headers: headers, body: body)
    }

    private func readChunked() throws(Failure) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            var lineEnd = firstRange(of: [13, 10])
            while lineEnd == nil {
                if !(try fill()) { throw Failure(description: "connection closed in chunked body") }
                lineEnd = firstRange(of: [13, 10])
            }
            let sizeText = String(decoding: buffer[0..<lineEnd!], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: " "), radix: 16) else {
                throw Failure(description: "bad chunk size")
            }
            buffer.removeFirst(lineEnd! + 2)
            while buffer.count < size + 2 {
                if !(try fill()) { throw Failure(description: "connection closed in chunk") }
            }
            body += buffer[0..<size]
            buffer.removeFirst(size + 2)
            if size == 0 { return body }
        }
    }

    private func firstRange(of pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        var i = 0
        while i <= buffer.count - pattern.count {
            if buffer[i] == pattern[0], Array(buffer[i..<(i + pattern.count)]) == pattern { return i }
            i += 1
        }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var s = self[...]
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
