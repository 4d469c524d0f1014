/// Why an ``HTTPServer`` could not start.
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `host` is not an IPv4 or IPv6 literal.
    case invalidHost(String)
    /// A configuration value is out of range; `reason` says which and why.
    case invalidConfiguration(String)
    /// libmicrohttpd could not bind or start. `address` is `host:port` (`[v6]:port`),
    /// `reason` the system's or libmicrohttpd's explanation.
    case cannotBind(address: String, reason: String)

    public var description: String {
        switch self {
        case .invalidHost(let host):
            return "invalid host \"\(host)\": expected an IPv4 or IPv6 address literal"
        case .invalidConfiguration(let reason):
            return "invalid HTTP server configuration: \(reason)"
        case .cannotBind(let address, let reason):
            return "cannot bind \(address): \(reason)"
        }
    }
}
