import Glibc

/// A TCP port that was free a moment ago, for servers that cannot bind port 0 and report it.
enum FreePort {
    static func pick() throws -> Int {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw BenchError("socket() failed: errno \(errno)") }
        defer { close(s) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(s, $0, length) == 0 && getsockname(s, $0, &length) == 0
            }
        }
        guard ok else { throw BenchError("cannot find a free port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
