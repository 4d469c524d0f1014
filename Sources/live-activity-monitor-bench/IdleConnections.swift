import Foundation

/// Many keep-alive connections opened to a server and left idle (item 4 of issue 23): each is
/// a plain socket of this process, connected, one in every `probeEvery` proven accepted by a
/// request answered 200 on it.
final class IdleConnections {
    private(set) var descriptors: [Int32] = []

    /// Opens `count` connections to 127.0.0.1:`port`; throws if one cannot be made or a probe fails.
    init(count: Int, port: Int, probeEvery: Int = 500) throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < rlim_t(count + 1_024) {
            limit.rlim_cur = min(limit.rlim_max, rlim_t(count + 1_024))
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        descriptors.reserveCapacity(count)
        for i in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { close(); throw BenchError("idle connection \(i): socket: \(String(cString: strerror(errno)))") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            descriptors.append(fd)
            guard connected == 0 else { close(); throw BenchError("idle connection \(i): connect: \(String(cString: strerror(errno)))") }
        }
        try probe(every: probeEvery)
    }

    /// Sends `GET /-/healthy` on one connection in `every` and expects 200 (keep-alive).
    func probe(every: Int) throws {
        let request = Array("GET /-/healthy HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
        for i in stride(from: 0, to: descriptors.count, by: every) {
            let fd = descriptors[i]
            guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else {
                throw BenchError("idle connection \(i) could not send: \(String(cString: strerror(errno)))")
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 12, String(decoding: buffer[..<12], as: UTF8.self) == "HTTP/1.1 200" else {
                throw BenchError("idle connection \(i) was not answered 200 (\(n) bytes)")
            }
        }
    }

    func close() {
        descriptors.forEach { _ = Glibc.close($0) }
        descriptors = []
    }

    deinit { close() }
}
