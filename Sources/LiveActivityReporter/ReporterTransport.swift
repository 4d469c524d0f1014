/// How the reporter talks HTTP. `URLSessionTransport` is the default; wrap it to observe or
/// shape traffic (the tests wrap it to drop a connection after the server answered).
///
/// Throw for anything that is not an HTTP answer (timeout, refused or dropped connection): the
/// reporter retries those, like a 5xx.
@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
public protocol ReporterTransport: Sendable {
    func send(_ request: TransportRequest) async throws -> TransportResponse
}
