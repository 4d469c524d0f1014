extension HTTPRequest {
    /// ``path`` split at each `/`, then each segment percent-decoded: `"/api/bookings/2026%2F1042"`
    /// is `["api", "bookings", "2026/1042"]`. The leading `/` starts the first segment, so `"/"`
    /// is `[""]` and a trailing `/` leaves an empty last segment. `+` stays `+` (it means a
    /// space only in a query string).
    ///
    /// `nil` when the path names nothing a router should look up: it does not start with `/`
    /// (`*`, an absolute URI), a `%` is not followed by two hex digits, a segment decodes to a
    /// NUL byte or to bytes that are not UTF-8.
    public var pathSegments: [String]? {
        Self.pathSegments(of: path)
    }

    /// The segments of a raw `path` as ``pathSegments`` gives them.
    public static func pathSegments(of path: String) -> [String]? {
        // Over the path's contiguous bytes: splitting its `UTF8View` generically built an array
        // of slices first, a few thousand instructions on every request (callgrind).
        var path = path
        return path.withUTF8 { bytes -> [String]? in
            guard bytes.first == UInt8(ascii: "/") else { return nil }
            var segments: [String] = []
            segments.reserveCapacity(bytes.count { $0 == UInt8(ascii: "/") })
            var start = 1
            while true {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.count
                guard let segment = percentDecoded(UnsafeBufferPointer(rebasing: bytes[start..<end])) else { return nil }
                segments.append(segment)
                guard end < bytes.count else { return segments }
                start = end + 1
            }
        }
    }

    /// `raw` with every `%XX` replaced by its byte, or nil if an escape is malformed or the
    /// result holds a NUL or is not UTF-8.
    private static func percentDecoded(_ raw: UnsafeBufferPointer<UInt8>) -> String? {
        // A String's own bytes are UTF-8 already (split at `/`, an ASCII byte): only an escape
        // needs a closer look.
        guard raw.contains(UInt8(ascii: "%")) || raw.contains(0) else { return String(decoding: raw, as: UTF8.self) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            var byte = raw[index]
            index += 1
            if byte == UInt8(ascii: "%") {
                guard index < raw.count, let high = hexValue(raw[index]) else { return nil }
                guard index + 1 < raw.count, let low = hexValue(raw[index + 1]) else { return nil }
                index += 2
                byte = high << 4 | low
            }
            if byte == 0 { return nil }
            decoded.append(byte)
        }
        return String(validating: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
