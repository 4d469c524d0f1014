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
        return isLoopbackName(host)
    }

    /// `isAddressed` for one `Host` value. Over its bytes, ASCII letters folded: it runs for every
    /// ingest request of a server without a token (`lowercased()` and `Character`
    /// comparisons were a visible share of a single-event ingest).
    static func isLoopbackName(_ host: String) -> Bool {
        let bytes = host.utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }
        var name = bytes[...], rest = bytes[bytes.endIndex...]
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return false }
            name = bytes[1..<close]
            rest = bytes[(close + 1)...]
        } else if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            name = bytes[..<colon]
            rest = bytes[colon...]
        }
        // After the name, only a port: "localhost:1@attacker.example" names attacker.example.
        guard rest.isEmpty || (rest.first == UInt8(ascii: ":")
                               && rest.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return false
        }
        if name.last == UInt8(ascii: ".") { name = name.dropLast() }
        return name.elementsEqual("localhost".utf8) || name.reversed().starts(with: ".localhost".utf8.reversed())
            || isLoopback(address: String(decoding: name, as: UTF8.self))
    }

    /// Why a request for another name is refused, and what to do about it.
    static func refusal(route: String, tokenOption: String) -> APIError {
        .forbidden("this server listens on loopback with no token for \(route): it answers only requests for "
                   + "localhost, 127.0.0.1 or [::1] (set \(tokenOption) to serve other host names)")
    }
}
