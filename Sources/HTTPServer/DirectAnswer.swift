import CMicroHTTPD
import Glibc

/// `send` flags that never raise SIGPIPE on a peer that went away. Here, where CMicroHTTPD is
/// imported: once a file of the module imports it, the socket constants are found only beside
/// it, and `HTTPClient`, which has no use for libmicrohttpd, takes this one.
let sendWithoutSignal = Int32(MSG_NOSIGNAL)

/// An error answer written straight to a connection's socket rather than queued through
/// libmicrohttpd, for the two cases libmicrohttpd 0.9.75 cannot answer as the server does:
/// - the refusals it makes itself (a header line without a colon, a `Content-Length` that is
///   not a number, a broken chunk, a head larger than its memory, an unsupported HTTP version):
///   its response is a fixed HTML page to which no header can be added, and for a bad
///   `Content-Length` its head is even written twice; see ``ServerCore/answerLibraryError(status:page:)``;
/// - a head so large that the connection's memory pool has no room left to build a response
///   (the connection was closed unanswered); see ``RequestHead/maxBytes``.
///
/// The answer has the server's default headers, a JSON body and `Connection: close`; the
/// socket is then shut down for writing, so whatever libmicrohttpd tries to send afterwards
/// fails and it closes the connection. Only ever called on the polling thread that serves the
/// connection, while libmicrohttpd is inside a callback for it and writes nothing itself.
enum DirectAnswer {
    /// Writes the answer to `fd` and shuts writing down. Gives up (the connection is closed
    /// all the same) if the client takes none of it for a second.
    static func send(status: Int, message: String, defaultHeaders: [(name: String, value: String)],
                     includeBody: Bool, to fd: Int32) {
        let body = ServerCore.errorBody(message)
        var head = "HTTP/1.1 \(status) \(String(cString: MHD_get_reason_phrase_for(UInt32(status))))\r\n"
        head += "Date: \(httpDate(time(nil)))\r\n"
        head += "Content-Type: application/json\r\n"
        for header in defaultHeaders where !["content-type", "content-length", "connection", "date"]
            .contains(header.name.lowercased()) && isFieldSafe(header.name) && isFieldSafe(header.value) {
            head += "\(header.name): \(header.value)\r\n"
        }
        head += "Connection: close\r\nContent-Length: \(body.count)\r\n\r\n"
        write(Array(head.utf8) + (includeBody ? body : []), to: fd)
        shutdown(fd, Int32(SHUT_WR))
    }

    private static func write(_ bytes: [UInt8], to fd: Int32) {
        var offset = 0
        var waited = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, sendWithoutSignal) }
            if sent > 0 {
                offset += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && waited < 1_000 {
                // libmicrohttpd's sockets do not block: wait for room, 1 s in all at most.
                var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&descriptor, 1, 100)
                waited += 100
            } else {
                return
            }
        }
    }

    /// No CR, LF or NUL: what libmicrohttpd itself refuses in a header.
    private static func isFieldSafe(_ text: String) -> Bool {
        !text.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
    }

    /// `Tue, 01 Dec 2026 20:58:13 GMT` (RFC 9110 section 5.6.7), independent of the locale.
    static func httpDate(_ seconds: time_t) -> String {
        var t = seconds
        var parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}

/// What one polling thread knows of the connections it serves, kept in the thread's own storage:
/// libmicrohttpd's log callback, where its own error answers show up, is told nothing of the
/// connection, but runs on the thread that serves it. In the thread-pool mode a connection stays
/// with the thread that accepted it for its whole life (its open and close are both reported
/// there), and the thread serves one connection at a time, so the connection a message is about
/// is one of this thread's: ``libraryErrorConnection(_:)`` finds it when only one can be.
final class WorkerThread {
    /// Where in a request libmicrohttpd's refusal came, as far as its page tells.
    enum RefusedStage {
        /// Its headers, after its request line (a `Content-Length` refused): a connection between
        /// requests, as idle keep-alive ones are, cannot be the one.
        case headers
        /// Its chunked body (a chunk or a trailer refused).
        case chunkedBody
        /// Anywhere before the handler has the whole request.
        case anyStage

        /// The stage libmicrohttpd's error page names: its pages about a `Content-Length` and a
        /// chunk say so.
        init(page: String) {
            self = page.contains("Content-Length") ? .headers : page.contains("chunked") ? .chunkedBody : .anyStage
        }
    }

    /// One connection of this thread. Its retained reference is the connection's socket
    /// context, so that a request finds it without a look-up (``of(_:)``).
    final class Connection {
        let connection: OpaquePointer
        /// What the watchdog keeps for the connection (nil only for a record made as a safety net).
        let watched: ConnectionWatchdog.Watched?
        /// The responses of the connection's thread (``WorkerThread/responses``).
        let responses: ResponseCache
        /// The core's handle for the connection's thread (``WorkerThread/handle(for:)``), nil for a
        /// record made as a safety net.
        let core: ServerCore.Handle?
        /// The request being read or answered (from its request line until it completes), if any.
        var context: RequestContext?
        /// The server has answered on the socket itself and shut it for writing: libmicrohttpd's
        /// messages about failing to send, and closing, are expected and not logged.
        var answeredDirectly = false
        /// This connection is counted in the core's `inFlight` until it closes: the server
        /// answered in libmicrohttpd's place, and libmicrohttpd is still finishing its own answer.
        /// `stop()` waits for that: libmicrohttpd 0.9.75 crashes when the daemon is stopped while
        /// it queues an error answer (`MHD_queue_response` then queues nothing, and the answer's
        /// head is built from no response).
        var holdsInFlight = false
        /// The peer's address as text, made on the first request that asks (once per connection).
        private var remote: String??

        init(_ connection: OpaquePointer, watched: ConnectionWatchdog.Watched?, responses: ResponseCache,
             core: ServerCore.Handle?) {
            self.connection = connection
            self.watched = watched
            self.responses = responses
            self.core = core
        }

        /// The record of `connection`, from its socket context (nil before it is reported open).
        static func of(_ connection: OpaquePointer) -> Connection? {
            CMicroHTTPD_socket_context(connection).map { Unmanaged<Connection>.fromOpaque($0).takeUnretainedValue() }
        }

        func remoteAddress(of connection: OpaquePointer) -> String? {
            if let remote { return remote }
            let text = CMicroHTTPD_client_address(connection).flatMap { SocketAddress.host(of: $0) }
            remote = .some(text)
            return text
        }
    }

    private(set) var connections: [OpaquePointer: Connection] = [:]
    /// Responses this thread has made and may queue again.
    let responses = ResponseCache()

    /// The handle of `core` for this thread's responders (a polling thread serves one daemon).
    private var handle: ServerCore.Handle?

    /// A connection of this thread opened: its record, watched by `watched`.
    func opened(_ connection: OpaquePointer, watched: ConnectionWatchdog.Watched, core: ServerCore) -> Connection {
        let record = Connection(connection, watched: watched, responses: responses, core: handle(for: core))
        connections[connection] = record
        return record
    }

    /// This thread's handle of `core`.
    func handle(for core: ServerCore) -> ServerCore.Handle {
        if let handle, handle.core === core { return handle }
        let made = ServerCore.Handle(core)
        handle = made
        return made
    }

    /// A connection of this thread closed: what it held of `inFlight` is given back.
    func closed(_ connection: OpaquePointer, core: ServerCore) {
        guard let record = connections.removeValue(forKey: connection) else { return }
        if record.holdsInFlight { core.inFlight.wrappingSubtract(1, ordering: .releasing) }
    }

    /// The record of `connection`, made (unwatched) if libmicrohttpd reported its opening elsewhere.
    func record(_ connection: OpaquePointer) -> Connection {
        if let record = Connection.of(connection) ?? connections[connection] { return record }
        let record = Connection(connection, watched: nil, responses: responses, core: nil)
        connections[connection] = record
        return record
    }

    /// Whether a connection of this thread was answered on its socket and is not closed yet.
    var hasDirectAnswer: Bool { connections.values.contains { $0.answeredDirectly } }

    /// The connection libmicrohttpd is refusing (its error answer logged just before it queues
    /// it), when only one connection of this thread can be it, or nil. The one refused has no
    /// response queued and is in one of three stages: between requests or reading its request
    /// line (no request yet, or one whose head the access handler has not seen: a request line
    /// or a header line refused, a head too large) or receiving a chunked body (a chunk or a
    /// trailer refused). A refusal its page places (`stage`) narrows them to that stage. If
    /// exactly one connection of this thread can be the one, it is; with more, libmicrohttpd's own
    /// page stays.
    func libraryErrorConnection(_ stage: RefusedStage) -> Connection? {
        var found: Connection?
        for record in connections.values where !record.answeredDirectly {
            let candidate: Bool
            switch record.context {
            case nil: candidate = stage == .anyStage
            case let context? where !context.started: candidate = stage != .chunkedBody
            case let context?: candidate = stage != .headers && context.chunked && !context.bodyComplete && !context.responded
            }
            guard candidate, CMicroHTTPD_has_response(record.connection) == 0 else { continue }
            if found != nil { return nil }
            found = record
        }
        return found
    }

    /// This thread's state, made on first use and released when the thread ends.
    static var current: WorkerThread {
        if let state = pthread_getspecific(key) { return Unmanaged<WorkerThread>.fromOpaque(state).takeUnretainedValue() }
        let state = WorkerThread()
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
        return state
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { state in
            if let state { Unmanaged<WorkerThread>.fromOpaque(state).release() }
        }
        return key
    }()
}
