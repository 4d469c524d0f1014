/// What one request accumulates across libmicrohttpd's calls to the access handler.
///
/// Created on the first call, stored in `*con_cls` as a retained `Unmanaged` reference,
/// released by the request-completed callback. Only the connection's own thread touches
/// it (thread-per-connection), so it needs no lock and is deliberately not `Sendable`.
final class RequestContext {
    /// The body received so far.
    var body: [UInt8] = []
    /// The body is over the limit: the rest of the upload is discarded and a 413 is owed.
    var bodyTooLarge = false
    /// Bytes of an over-limit body received past the limit (and thrown away).
    var discardedBytes = 0
    /// A response has been queued; later calls only discard upload data.
    var responded = false

    init(expectedBodyBytes: Int) {
        body.reserveCapacity(expectedBodyBytes)
    }
}
