import Glibc

/// Whether this machine has an IPv6 loopback to bind (some containers are started without
/// IPv6): tests that need `::1` are skipped, and say so, when it has none.
public enum IPv6Loopback {
    public static let isAvailable: Bool = {
        let s = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { return false }
        defer { close(s) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(s, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
        return rc == 0
    }()

    /// Why such a test is skipped (a trait's comment: `Comment(rawValue: IPv6Loopback.skipReason)`).
    public static let skipReason = "no IPv6 loopback (::1) on this machine: cannot bind it"
}
