/// Answers one request synchronously, on a libmicrohttpd polling thread: it must be safe to call
/// from any thread at once (hence `@Sendable`, never main-actor isolated) and quick, for while it
/// runs no other connection of its thread is served. Work that waits (a durable commit) takes an
/// ``HTTPDeferringHandler`` instead.
public typealias HTTPHandler = @Sendable (HTTPRequest) -> HTTPResponse

/// Answers one request through `responder`, at once or later from any thread: the request's
/// connection is suspended meanwhile and holds no thread (see ``HTTPResponder``). Called on a
/// libmicrohttpd polling thread: it must return quickly and never wait.
public typealias HTTPDeferringHandler = @Sendable (HTTPRequest, HTTPResponder) -> Void
