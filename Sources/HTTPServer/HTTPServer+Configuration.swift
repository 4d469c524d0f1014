import Glibc

extension HTTPServer {
    /// How an ``HTTPServer`` binds, and the limits it enforces. The defaults suit a
    /// local service; libmicrohttpd's own defaults have no timeout, so one is always set.
    public struct Configuration: Sendable {
        /// IPv4 or IPv6 address literal to bind; `"0.0.0.0"` or `"::"` for all interfaces
        /// (`"::"` also accepts IPv4, the socket being dual-stack).
        public var host: String = "127.0.0.1"

        /// Whether `host` is an address ``host`` takes (a literal: no names, no DNS at start-up).
        public static func isAddress(_ host: String) -> Bool {
            (try? SocketAddress(host: host, port: 0)) != nil
        }
        /// TCP port; 0 lets the system pick a free one (read it back from ``HTTPServer/port``).
        public var port: Int = 0
        /// Largest request body accepted. A larger `Content-Length` is answered 413 at once,
        /// before the body is read (and before any `100 Continue`); a chunked body that grows
        /// past it stops being buffered and is answered 413 when it ends (libmicrohttpd 0.9.75
        /// cannot answer mid-body), or cut off without an answer if it goes on for more than
        /// `max(maxBodyBytes, 64 KiB)` further bytes. Either way the connection is then closed.
        public var maxBodyBytes: Int = 1 << 20
        /// Most request-body bytes held at once by all requests together, from the first byte
        /// received until the handler has returned; 0 means no limit. A request that would go
        /// over it is answered 503 with `Retry-After` (at once when its `Content-Length` says so,
        /// when a chunked body ends otherwise). A request alone always fits, whatever its size
        /// up to `maxBodyBytes`. Bounds the memory of many large requests at once.
        public var maxInflightBodyBytes: Int = 0
        /// Most connections open at once; further ones are closed as soon as they are accepted.
        /// An idle connection holds no thread, only its socket and buffers; the soft limit on
        /// open files is raised to fit, within the hard limit.
        public var maxConnections: Int = 256
        /// libmicrohttpd polling threads (each serves its share of the connections with epoll);
        /// one per processor by default. Capped at `maxConnections`.
        public var threadPoolSize: Int = HTTPServer.Configuration.processorCount

        /// Processors this process may run on.
        public static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
        /// Most connections open at once from one IP address; 0 means no per-address limit.
        public var maxConnectionsPerIP: Int = 0
        /// Seconds a connection may stay silent (idle keep-alive, or a client sending nothing)
        /// before it is closed; also the most a connection may take to send a whole request
        /// (counted from when it opened or its previous response was sent) or to take a
        /// response, however steadily it trickles bytes (see `ConnectionWatchdog`). A handler
        /// that is running is not timed out.
        public var connectionTimeoutSeconds: Int = 30
        /// Headers added to every response, including the ones the server makes itself (413).
        /// A handler header with the same name (case-insensitively) replaces the default.
        public var defaultHeaders: [(name: String, value: String)] = []
        /// Seconds ``HTTPServer/stop()`` waits for requests already being handled to be answered
        /// before closing every connection (those still unanswered then are logged, by count).
        public var shutdownGracePeriodSeconds: Double = 10
        /// Told of each answer the server gives without calling the handler, with the request's
        /// path (as sent, like ``HTTPRequest/path``) and the status, so that such requests can be
        /// counted like handled ones: 413 for a body over `maxBodyBytes`; what a request's head
        /// alone is refused for (400 for ambiguous framing or a missing `Host`, 501 for a
        /// transfer coding other than chunked, 415 for a content coding, 431 for headers over
        /// 24 KiB); and libmicrohttpd's own refusals (400, 413, 431, 505), which the server answers
        /// in its place when it can tell the connection (not told otherwise). Each such answer is
        /// JSON (`{"error": …}`) with the default headers and closes the connection. Called on a
        /// libmicrohttpd thread.
        public var serverAnswered: (@Sendable (_ path: String, _ status: Int) -> Void)? = nil
        /// Called when a request asks for `100 Continue` (`Expect: 100-continue`), once its
        /// headers are in and found sound, before `100 Continue` is sent or any of the body read,
        /// with the request as the handler would get it but an empty body. A response refuses
        /// the request at once, without `100 Continue` (the connection is then closed: the body
        /// is never read); nil lets the client send the body, and the handler answers as usual.
        /// For what the handler would refuse from the headers alone (credentials, content type):
        /// it must be quick. Called on a libmicrohttpd thread; `serverAnswered` is not told.
        public var checkBeforeContinue: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil
        /// Receives libmicrohttpd's own diagnostics (e.g. "Server reached connection limit"),
        /// from any thread. `nil` discards them; start-up failures are reported in the thrown
        /// ``HTTPServerError`` either way.
        public var errorLog: (@Sendable (String) -> Void)? = nil
        /// Tests: run by an answer between its request's lock and its `MHD_resume_connection`.
        var beforeResume: (@Sendable () -> Void)? = nil

        /// The defaults: 127.0.0.1, a free port, 1 MiB bodies, 256 connections, 30 s timeout.
        public init() {}
    }
}
