/// What one request accumulates across libmicrohttpd's calls to the access handler.
///
/// Created by the URI log callback, when the request line is in, and stored in `*con_cls` as
/// a retained `Unmanaged` reference; released by the request-completed callback. Only the
/// connection's own thread touches it (thread-per-connection), so it needs no lock and is
/// deliberately not `Sendable`.
final class RequestContext {
    /// The request target exactly as sent (query string included, nothing decoded); nil if
    /// libmicrohttpd did not report it.
    let target: String?
    /// The access handler has seen the headers (and counted the request in `inFlight`).
    var started = false
    /// The body received so far.
    var body: [UInt8] = []
    /// The body is over the limit: the rest of the upload is discarded and a 413 is owed.
    var bodyTooLarge = false
    /// Bytes of an over-limit body received past the limit (and thrown away).
    var discardedBytes = 0
    /// A response has been queued; later calls only discard upload data.
    var responded = false

    init(target: String?) {
        self.target = target
    }

    /// The path as sent, still percent-encoded: the target up to its query string. Falls back
    /// on `decodedURL` (libmicrohttpd's decoded copy) if the target is unknown.
    func path(decodedURL: UnsafePointer<CChar>?) -> String {
        guard let target else { return decodedURL.map { String(cString: $0) } ?? "" }
        return String(target.prefix { $0 != "?" })
    }
}
