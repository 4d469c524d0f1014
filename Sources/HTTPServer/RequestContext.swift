/// What one request accumulates across libmicrohttpd's calls to the access handler.
///
/// Created by the URI log callback, when the request line is in, and stored in `*con_cls` as
/// a retained `Unmanaged` reference; released by the request-completed callback. Only the
/// polling thread that serves the connection touches it (a connection never changes thread),
/// so it needs no lock and is deliberately not `Sendable`; what other threads reach is its
/// ``responder``.
final class RequestContext {
    /// The request target exactly as sent (query string included, nothing decoded); nil if
    /// libmicrohttpd did not report it.
    let target: String?
    /// The target's length in bytes as libmicrohttpd holds it (up to a NUL byte, if any).
    let targetByteCount: Int
    /// The path as sent, still percent-encoded, without the query string: the target's own, or
    /// for an absolute-form target (`http://host:port/path?query`, RFC 9112 section 3.2.2) the
    /// part after its authority ("/" if none).
    let sentPath: String?
    /// The authority of an absolute-form target (`host:port`), which stands for `Host`.
    let authority: String?
    /// The access handler has seen the headers (and counted the request in `inFlight`).
    var started = false
    /// The header fields as received, copied once on the first call.
    var fields = HeaderFields()
    /// The body received so far.
    var body: [UInt8] = []
    /// The body is over the limit: the rest of the upload is discarded and a 413 is owed.
    var bodyTooLarge = false
    /// Bytes of an over-limit body received past the limit (and thrown away).
    var discardedBytes = 0
    /// Bytes of the in-flight body budget this request holds (`ServerCore.reserveBody`).
    var reservedBodyBytes = 0
    /// The body would go over the in-flight budget: the rest is discarded and a 503 is owed.
    var bodyOverBudget = false
    /// A response has been queued; later calls only discard upload data.
    var responded = false
    /// The body is chunked (its end is known only when it comes).
    var chunked = false
    /// The access handler's final call has come: the whole body is in.
    var bodyComplete = false
    /// Set when the handler has been called: the answer it owes, now or after a suspend.
    var responder: HTTPResponder?
    /// What the polling thread keeps for the request's connection (set with the request line).
    var connection: WorkerThread.Connection?

    init(target: String?, targetByteCount: Int? = nil) {
        self.target = target
        self.targetByteCount = targetByteCount ?? target?.utf8.count ?? 0
        guard let target else {
            sentPath = nil
            authority = nil
            return
        }
        if target.utf8.first != UInt8(ascii: "/"), let (authority, rest) = Self.splitAbsoluteForm(target) {
            self.authority = authority
            let path = Self.beforeQuery(rest)
            sentPath = path.isEmpty ? "/" : String(path)
        } else {
            authority = nil
            // Most targets have no query: their path is the target itself, not a copy.
            let path = Self.beforeQuery(target[...])
            sentPath = path.endIndex == target.endIndex ? target : String(path)
        }
    }

    /// `target` up to its `?`, found by bytes (a walk by characters cost every request more).
    static func beforeQuery(_ target: Substring) -> Substring {
        target[..<(target.utf8.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex)]
    }

    /// The path as sent, still percent-encoded: the target up to its query string (after the
    /// authority, for an absolute-form target). Falls back on `decodedURL` (libmicrohttpd's
    /// decoded copy) if the target is unknown.
    func path(decodedURL: UnsafePointer<CChar>?) -> String {
        sentPath ?? decodedURL.map { String(cString: $0) } ?? ""
    }

    /// `http://authority/rest` or `https://authority/rest` (scheme in any case): the authority
    /// and what follows it (path and query, possibly empty); nil for any other target.
    static func splitAbsoluteForm(_ target: String) -> (authority: String, rest: Substring)? {
        let bytes = target.utf8
        let lowered = bytes.prefix(8).map { $0 >= 65 && $0 <= 90 ? $0 | 0x20 : $0 }
        let schemeLength: Int
        if lowered.starts(with: "http://".utf8) {
            schemeLength = 7
        } else if lowered.starts(with: "https://".utf8) {
            schemeLength = 8
        } else {
            return nil
        }
        let afterScheme = target.utf8.index(target.startIndex, offsetBy: schemeLength)
        let rest = target[afterScheme...]
        let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        return (String(rest[..<end]), rest[end...])
    }
}
