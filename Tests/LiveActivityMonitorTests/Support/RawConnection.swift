import Foundation
import Glibc

/// One TCP connection to the server on loopback, driven byte by byte: for clients that
/// `HTTPClient` is too polite to be (slowloris, oversized declarations, connection floods).
final class RawConnection {
    private(set) var fd: Int32

    /// Connects to 127.0.0.1:`port`; throws when the connection itself is refused.
    init(port: Int) throws {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw Failure("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            let e = errno
            Glibc.close(s)
            throw Failure("connect() failed: errno \(e)")
        }
        fd = s
    }

    deinit { close() }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends every byte; false once the server has closed or reset the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Whether the server has closed the connection (end of stream or reset), waiting up to
    /// `seconds` for it. Bytes the server sent before closing are read and discarded.
    func isClosed(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let left = deadline.timeIntervalSinceNow
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, Int32(max(0, left) * 1000))
            if ready > 0 {
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) { return true }
                continue
            }
            if left <= 0 { return false }
        }
    }

    /// Everything the server sends until it closes the connection or `seconds` pass.
    func readUntilClosed(seconds: Double) -> (bytes: [UInt8], closed: Bool) {
        var bytes: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return (bytes, false) }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(left * 1000)) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { bytes += chunk[0..<n]; continue }
            if n == 0 || (errno != EAGAIN && errno != EINTR) { return (bytes, true) }
        }
    }

    /// Reads one response head (status line and headers) and as much body as `Content-Length`
    /// announces, waiting up to `seconds`; nil if none arrives in time.
    func readResponse(seconds: Double) -> ParsedResponse? {
        var bytes: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        while deadline.timeIntervalSinceNow > 0 {
            if let parsed = ParsedResponse(bytes), parsed.isComplete { return parsed }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { bytes += chunk[0..<n]; continue }
            if n == 0 || (errno != EAGAIN && errno != EINTR) { break }
        }
        return ParsedResponse(bytes)
    }

    /// A response as read off the wire.
    struct ParsedResponse {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var isComplete: Bool
        var text: String { String(decoding: body, as: UTF8.self) }

        init?(_ bytes: [UInt8]) {
            let separator: [UInt8] = [13, 10, 13, 10]
            guard bytes.count >= 4,
                  let end = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == separator })
            else { return nil }
            let lines = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
            let statusParts = lines[0].split(separator: " ")
            guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
            self.status = status
            headers = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            body = Array(bytes[(end + 4)...])
            let length = headers["content-length"].flatMap { Int($0) } ?? 0
            isComplete = body.count >= length
            if body.count > length { body = Array(body[0..<length]) }
        }
    }
}
