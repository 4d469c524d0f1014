/// Answers one request. Called on a libmicrohttpd connection thread, synchronously:
/// it must be safe to call from any thread at once (hence `@Sendable`, never main-actor
/// isolated) and may block, which holds only its own connection.
public typealias HTTPHandler = @Sendable (HTTPRequest) -> HTTPResponse
