import CMicroHTTPD
import Glibc

/// A request's head (request line and header fields) as libmicrohttpd parsed it, checked on the
/// access handler's first call: before any of the body is read and before `100 Continue`.
///
/// What is refused here (RFC 9112 sections 3.2 and 6, RFC 9110 section 8.4):
/// - a head larger than ``maxBytes`` (431), counted as libmicrohttpd uses its connection memory,
///   so that a head it had room for but no room left to answer is never closed unanswered;
/// - a head with bytes libmicrohttpd does not hand on: it ends every name and value at its
///   first NUL byte (`Bearer <token>\0junk` would reach a handler as `Bearer <token>`), and
///   drops folded lines' breaks and extra spaces after a colon (400);
/// - a field name that is not a token (whitespace before the colon: libmicrohttpd keeps it in
///   the name, so `Content-Length : 5` would frame nothing here and its body would be read as a
///   request of its own) or a value with a control character (a bare CR, which a proxy may read
///   as a line's end) (400, RFC 9112 sections 2.2 and 5.1, RFC 9110 section 5);
/// - HTTP/1.1 without exactly one `Host` (400);
/// - ambiguous framing: `Content-Length` with `Transfer-Encoding`, `Content-Length` more than
///   once (even with equal values: no client sends that), one that is not a decimal number, or
///   `Transfer-Encoding` on HTTP/1.0 (400); a transfer coding other than a single `chunked`
///   (501: its body's end could not be found, and the connection would hang until it timed out);
/// - a body in a content coding other than `identity` (415: the server decodes none, a handler
///   would get compressed bytes).
/// libmicrohttpd itself refuses a `Content-Length` that is not a number (or too large for 64
/// bits) before the access handler is called; `ServerCore.answerLibraryError` answers those.
///
/// The NUL check compares lengths, the only view libmicrohttpd 0.9.75 gives of the raw head:
/// a head longer than its canonical form is refused. A client that writes its fields more
/// compactly than canonically (no space after a colon, bare LF line ends) can still hide that
/// many bytes behind a NUL; every common client writes `Name: value` CRLF.
struct RequestHead {
    /// The largest head accepted: request line and fields in bytes, plus 64 bytes for each field,
    /// query argument and cookie (libmicrohttpd's record of each). The connection's memory pool
    /// (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`, 32 KiB) holds the head and then the response's
    /// head; the 8 KiB left above this limit is room for the answer.
    static let maxBytes = 24 << 10
    /// The pool size given to libmicrohttpd: its own default. libmicrohttpd 0.9.75 `mmap`s a
    /// larger pool at each connection and zeroes the whole pool after every request, which
    /// made a 64 KiB pool the largest single cost of a request (Tests/bench/PERFORMANCE.md).
    static let connectionMemory = 32 << 10

    let method: String
    let version: String
    /// The header fields: every one as received, and what framing reads of them.
    private let scan: HeadScan
    /// Every header field as received, for the handler (``HTTPRequest/header(_:)``).
    var fields: HeaderFields { scan.fields }
    /// Bytes of the head as received, from libmicrohttpd (0 if it cannot say).
    let receivedBytes: Int
    /// Bytes the head takes in libmicrohttpd's pool, estimated (see ``maxBytes``).
    let pooledBytes: Int
    /// Bytes the head would have written canonically, from what libmicrohttpd hands on: the
    /// request line and each field as `Name: value` CRLF, and the blank line.
    let canonicalBytes: Int

    /// How often a field came, and its first value.
    struct Occurrences {
        private(set) var count = 0
        private(set) var first: String?
        var isEmpty: Bool { count == 0 }

        mutating func add(_ value: () -> String) {
            if count == 0 { first = value() }
            count += 1
        }
    }

    /// The head of the request on `connection`; `context` supplies the target. One walk over
    /// libmicrohttpd's records: each field's bytes are copied once, and only the fields that
    /// framing reads are made strings.
    init(connection: OpaquePointer, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
         context: RequestContext) {
        self.method = method.map { String(cString: $0) } ?? ""
        self.version = version.map { String(cString: $0) } ?? ""
        receivedBytes = CMicroHTTPD_request_header_size(connection)
        let fieldCount = max(0, Int(MHD_get_connection_values(connection, .HEADER_KIND, nil, nil)))
        var scan = HeadScan(fields: HeaderFields(reservingFor: fieldCount, receivedBytes: receivedBytes))
        let records = withUnsafeMutablePointer(to: &scan) { scan in
            Int(max(0, CMicroHTTPD_request_values(connection, scanValue, scan)))
        }
        self.scan = consume scan
        // "METHOD target VERSION\r\n"; "Name: value\r\n" for each field; the blank line.
        canonicalBytes = (method.map { strlen($0) } ?? 0) + 1 + context.targetByteCount + 1
            + (version.map { strlen($0) } ?? 0) + 2 + self.scan.byteCount + 4 * self.scan.fieldCount + 2
        pooledBytes = max(receivedBytes, canonicalBytes) + self.scan.cookieBytes + 64 * records
    }

    /// HTTP/1.1, or a later 1.x (libmicrohttpd lets only 1.x through).
    var isHTTP11: Bool { version != "HTTP/1.0" }

    /// Why the request must be refused from its head, or nil.
    struct Refusal: Error {
        let status: Int
        let message: String
    }

    /// What the head declares of its body, once it is found sound.
    struct Framing {
        /// The declared `Content-Length`, if any.
        let contentLength: UInt64?
        let chunked: Bool
        var hasBody: Bool { chunked || (contentLength ?? 0) > 0 }
    }

    /// Checks the head; the framing it declares, or why it is refused.
    func check() -> Result<Framing, Refusal> {
        if pooledBytes > Self.maxBytes {
            return .failure(Refusal(status: 431, message: Self.tooLargeMessage))
        }
        if receivedBytes > canonicalBytes {
            return .failure(Refusal(status: 400, message: "the request head holds bytes the server cannot read: a NUL byte, "
                                    + "a folded header line, or more than one space after a colon"))
        }
        if scan.malformedField {
            return .failure(Refusal(status: 400, message: "a header field holds a character HTTP does not allow: "
                                    + "whitespace before its colon, or a control character such as a bare CR"))
        }
        if scan.hostCount > 1 {
            return .failure(Refusal(status: 400, message: "more than one Host header"))
        }
        if scan.hostCount == 0 && isHTTP11 {
            return .failure(Refusal(status: 400, message: "an HTTP/1.1 request must have a Host header"))
        }
        let codings = scan.transferCodings
        let lengths = scan.contentLengths
        if !codings.isEmpty && !lengths.isEmpty {
            return .failure(Refusal(status: 400, message: "Content-Length and Transfer-Encoding together: "
                                    + "the body's length is ambiguous"))
        }
        if !codings.isEmpty && !isHTTP11 {
            return .failure(Refusal(status: 400, message: "Transfer-Encoding in an HTTP/1.0 request"))
        }
        if !codings.isEmpty && (codings.count > 1 || Self.trimmed(codings.first ?? "").lowercased() != "chunked") {
            return .failure(Refusal(status: 501, message: "Transfer-Encoding other than a single chunked is not supported"))
        }
        if lengths.count > 1 {
            return .failure(Refusal(status: 400, message: "more than one Content-Length"))
        }
        var contentLength: UInt64?
        if let length = lengths.first {
            guard !length.isEmpty, length.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let value = UInt64(length) else {
                return .failure(Refusal(status: 400, message: Self.badLengthMessage))
            }
            contentLength = value
        }
        let framing = Framing(contentLength: contentLength, chunked: !codings.isEmpty)
        if framing.hasBody {
            for coding in scan.contentCodings {
                for token in coding.split(separator: ",", omittingEmptySubsequences: false)
                where Self.trimmed(token).lowercased() != "identity" {
                    return .failure(Refusal(status: 415, message: "Content-Encoding is not supported: "
                                            + "send the body uncompressed (identity)"))
                }
            }
        }
        return .success(framing)
    }

    /// Whether the client waits for `100 Continue` before it sends the body (what
    /// libmicrohttpd looks at: HTTP/1.1 and a first `Expect` of `100-continue`).
    var expectsContinue: Bool {
        isHTTP11 && scan.expects.first.map { Self.trimmed($0).lowercased() == "100-continue" } == true
    }

    static let tooLargeMessage = "request headers exceed \(maxBytes) bytes"
    static let badLengthMessage = "Content-Length must be one decimal number of bytes"

    static func trimmed(_ s: some StringProtocol) -> Substring {
        var t = Substring(s)
        while let first = t.first, first == " " || first == "\t" { t.removeFirst() }
        while let last = t.last, last == " " || last == "\t" { t.removeLast() }
        return t
    }
}

/// What ``RequestHead``'s walk gathers (`scanValue`'s `cls`).
private struct HeadScan {
    var fields: HeaderFields
    /// Bytes of every field's name and value as libmicrohttpd holds them (C strings: each ends
    /// at its first NUL).
    var byteCount = 0
    var fieldCount = 0
    /// What libmicrohttpd's parse of each `Cookie` field takes in its pool: the value and a NUL.
    var cookieBytes = 0
    var hostCount = 0
    var transferCodings = RequestHead.Occurrences()
    var contentLengths = RequestHead.Occurrences()
    /// Every `Content-Encoding` value, in order.
    var contentCodings: [String] = []
    /// The first is the one libmicrohttpd looks at.
    var expects = RequestHead.Occurrences()
    /// A field's name is not a token, or its value holds a control character other than a tab.
    var malformedField = false

    /// The fields read here, in the order of ``add(name:value:)``'s switch.
    static let names = ["host", "transfer-encoding", "content-length", "content-encoding", "expect", "cookie"].map(FieldName.init)

    mutating func add(name: UnsafePointer<CChar>, value: UnsafePointer<CChar>?) {
        let nameBytes = UnsafeRawBufferPointer(start: name, count: strlen(name))
        // `?flag` has a NULL value; a header field never has.
        let rawValue = UnsafeRawBufferPointer(start: value, count: value.map { strlen($0) } ?? 0)
        byteCount += nameBytes.count + rawValue.count
        fieldCount += 1
        // A value is without the whitespace around it (RFC 9110 section 5.5): libmicrohttpd drops
        // only the leading.
        var end = rawValue.count
        while end > 0, rawValue[end - 1] == UInt8(ascii: " ") || rawValue[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        let valueBytes = UnsafeRawBufferPointer(rebasing: rawValue[..<end])
        if nameBytes.isEmpty || !nameBytes.allSatisfy(Self.isTokenByte) || valueBytes.contains(where: Self.isControl) {
            malformedField = true
        }
        fields.append(name: nameBytes, value: valueBytes)
        guard let which = FieldName.firstIndex(in: Self.names, of: nameBytes) else { return }
        let text = { String(decoding: valueBytes, as: UTF8.self) }
        switch which {
        case 0: hostCount += 1
        case 1: transferCodings.add(text)
        case 2: contentLengths.add(text)
        case 3: contentCodings.append(text())
        case 4: expects.add(text)
        default: cookieBytes += text().utf8.count + 1
        }
    }
}

extension HeadScan {
    /// RFC 9110 section 5.6.2's `tchar`: what a field name is made of.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"),
             UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "^"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// A control character a field value may not hold (RFC 9110 section 5.5: a tab it may).
    static func isControl(_ byte: UInt8) -> Bool { (byte < 0x20 && byte != 0x09) || byte == 0x7F }
}

/// `MHD_KeyValueIterator` over the head's records; `cls` is the `HeadScan`. Query arguments and
/// cookies are only counted (by the walk's result).
private func scanValue(cls: UnsafeMutableRawPointer?, kind: MHD_ValueKind,
                      key: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?) -> MHD_Result {
    guard kind == .HEADER_KIND, let cls, let key else { return .YES }
    cls.assumingMemoryBound(to: HeadScan.self).pointee.add(name: key, value: value)
    return .YES
}
