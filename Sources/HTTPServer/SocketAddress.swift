import Glibc

/// An IPv4 or IPv6 socket address parsed from a literal, in the form libmicrohttpd's
/// `MHD_OPTION_SOCK_ADDR` wants (`sockaddr_in`, or `sockaddr_in6` with `MHD_USE_IPv6`), and
/// that `HTTPClient` connects to.
struct SocketAddress {
    private var storage = sockaddr_storage()
    /// Whether this is an IPv6 address (the daemon must then be started with IPv6 flags).
    let isIPv6: Bool
    /// `AF_INET` or `AF_INET6`, for `socket()`.
    var family: Int32 { isIPv6 ? AF_INET6 : AF_INET }
    /// The size of the `sockaddr_in` or `sockaddr_in6`, for `connect()`.
    var length: socklen_t {
        socklen_t(isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    }
    /// `host:port`, or `[host]:port` for IPv6, for messages.
    let description: String

    /// Parses `host` (an address literal, never a name: no DNS at start-up) and `port`.
    init(host: String, port: Int) throws(HTTPServerError) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr = v4
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.storeBytes(of: address, as: sockaddr_in.self)
            }
            isIPv6 = false
            description = "\(host):\(port)"
        } else if inet_pton(AF_INET6, host, &v6) == 1 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            address.sin6_addr = v6
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.storeBytes(of: address, as: sockaddr_in6.self)
            }
            isIPv6 = true
            description = "[\(host)]:\(port)"
        } else {
            throw .invalidHost(host)
        }
    }

    /// Calls `body` with a pointer to the address, valid only during the call.
    func withSockaddrPointer<R>(_ body: (UnsafePointer<sockaddr>) -> R) -> R {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
    }

    /// The numeric host of an IPv4 or IPv6 socket address (no port), or `nil` for other families.
    static func host(of address: UnsafePointer<sockaddr>) -> String? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let written: UnsafePointer<CChar>?
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            written = UnsafeRawPointer(address).withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                var raw = v4.pointee.sin_addr
                return inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
            }
        case AF_INET6:
            written = UnsafeRawPointer(address).withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                var raw = v6.pointee.sin6_addr
                // A dual-stack socket sees IPv4 clients as ::ffff:a.b.c.d; report them as a.b.c.d.
                let bytes = withUnsafeBytes(of: raw) { Array($0) }
                if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
                    var mapped = in_addr()
                    withUnsafeMutableBytes(of: &mapped) { $0.copyBytes(from: bytes[12..<16]) }
                    return inet_ntop(AF_INET, &mapped, &text, socklen_t(text.count))
                }
                return inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
            }
        default:
            return nil
        }
        guard written != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
