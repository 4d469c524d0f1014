import Foundation
import HTTPServer

/// DNS rebinding: a web page can make its own name resolve to 127.0.0.1 and then read a server
/// that listens on loopback as its own origin (same-origin, so no CORS stops it). A browser
/// always sends the name it asked for in `Host`, so a loopback server that has no token for a
/// route answers it only for loopback names.
enum LoopbackHost {
    /// Whether `address` (an IPv4 or IPv6 literal, as `--host` takes) is a loopback address.
    static func isLoopback(address: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        if inet_pton(AF_INET6, address, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) } == [UInt8](repeating: 0, count: 15) + [1]
        }
        return false
    }

    /// Whether the request is addressed to a loopback name: `localhost` (or a name under it,
    /// which browsers resolve to loopback themselves), 127.0.0.0/8 or `[::1]`, with an optional
    /// port. A request without `Host` (HTTP/1.0) comes from no browser and passes.
    static func isAddressed(_ request: HTTPRequest) -> Bool {
        guard let host = request.header("host") else { return true }
        var rest = Substring(host.lowercased())
        var name: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return false }
            name = rest[rest.index(after: rest.startIndex)..<close]
            rest = rest[rest.index(after: close)...]
        } else {
            let colon = rest.firstIndex(of: ":") ?? rest.endIndex
            name = rest[..<colon]
            rest = rest[colon...]
        }
        // After the name, only a port: "localhost:1@attacker.example" names attacker.example.
        guard rest.isEmpty || (rest.first == ":" && rest.dropFirst().allSatisfy { ("0"..."9").contains($0) }) else {
            return false
        }
        if name.hasSuffix(".") { name = name.dropLast() }
        return name == "localhost" || name.hasSuffix(".localhost") || isLoopback(address: String(name))
    }

    /// Why a request for another name is refused, and what to do about it.
    static func refusal(route: String, tokenOption: String) -> APIError {
        .forbidden("this server listens on loopback with no token for \(route): it answers only requests for "
                   + "localhost, 127.0.0.1 or [::1] (set \(tokenOption) to serve other host names)")
    }
}
