/// A response as read off the wire by ``RawConnection``: header names lowercased.
public struct RawResponse: Sendable {
    public var status: Int
    /// Every header line in order (a name may repeat).
    public var fields: [(name: String, value: String)]
    public var body: [UInt8]
    /// Whether the body is as long as `Content-Length` says (false: the connection ended first).
    public var isComplete: Bool

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The headers by name; a repeated one has its last value.
    public var headers: [String: String] {
        Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
    }

    /// Every value of header `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name == name.lowercased() }.map(\.value)
    }

    /// The first value of header `name`, or nil if absent.
    public func header(_ name: String) -> String? {
        values(name).first
    }

    /// The head of the response at the start of `bytes`, or nil while it is incomplete: what
    /// it says and where its body starts and ends (`Content-Length`, 0 without one).
    struct Head {
        var status: Int
        var fields: [(name: String, value: String)]
        var bodyStart: Int
        var bodyLength: Int
        var end: Int { bodyStart + bodyLength }

        init?(_ bytes: [UInt8]) throws {
            guard bytes.count >= 4,
                  let end = (0...(bytes.count - 4)).first(where: {
                      bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10
                  })
            else { return nil }
            let head = String(decoding: bytes[0..<end], as: UTF8.self)
            var lines = head.split(separator: "\r\n", omittingEmptySubsequences: true)
            guard !lines.isEmpty else { throw RawConnection.Failure.malformed(head) }
            let statusLine = lines.removeFirst().split(separator: " ")
            guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw RawConnection.Failure.malformed(head) }
            self.status = status
            fields = []
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { throw RawConnection.Failure.malformed(head) }
                fields.append((name: line[..<colon].lowercased(), value: line[line.index(after: colon)...].trimmingSpaces()))
            }
            bodyStart = end + 4
            bodyLength = fields.first { $0.name == "content-length" }.flatMap { Int($0.value) } ?? 0
        }

        /// The response, with as much of its body as `bytes` holds.
        func response(in bytes: [UInt8]) -> RawResponse {
            let available = min(end, bytes.count)
            return RawResponse(status: status, fields: fields, body: Array(bytes[bodyStart..<available]),
                               isComplete: available == end)
        }
    }
}

private extension Substring {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
