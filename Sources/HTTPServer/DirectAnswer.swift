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
/// fails and it closes the connection. Only ever called on the connection's own thread, while
/// libmicrohttpd is inside a callback for it and writes nothing itself.
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

/// What the server knows of the connection a libmicrohttpd thread serves, kept in the thread's
/// own storage: libmicrohttpd's log callback, where its own error answers show up, is told
/// nothing of the connection, but runs on the connection's thread.
///
/// Sound only in thread-per-connection mode, where a thread serves one connection for its whole
/// life (the state is made by the first request's URI callback and dies with the thread). With
/// a thread pool a thread moves between connections, and this would name the wrong one.
final class ConnectionThread {
    let connection: OpaquePointer
    let core: ServerCore
    /// The path of the request being read (as sent), once its request line is in; nil between
    /// requests.
    var path: String?
    /// The server has answered on the socket itself and shut it for writing: libmicrohttpd's
    /// messages about failing to send, and closing, are expected and not logged.
    var answeredDirectly = false
    /// This connection is counted in the core's `inFlight` until its thread ends: the server
    /// answered in libmicrohttpd's place, and libmicrohttpd is still finishing its own answer.
    /// `stop()` waits for that: libmicrohttpd 0.9.75 crashes when the daemon is stopped while
    /// it queues an error answer (`MHD_queue_response` then queues nothing, and the answer's
    /// head is built from no response).
    var holdsInFlight = false

    private init(connection: OpaquePointer, core: ServerCore) {
        self.connection = connection
        self.core = core
    }

    deinit {
        if holdsInFlight { core.inFlight.wrappingSubtract(1, ordering: .releasing) }
    }

    /// This thread's state, if a request of its connection has been seen.
    static var current: ConnectionThread? {
        pthread_getspecific(key).map { Unmanaged<ConnectionThread>.fromOpaque($0).takeUnretainedValue() }
    }

    /// This thread's state for `connection`, made (or remade, for another connection) if needed.
    static func serving(_ connection: OpaquePointer, core: ServerCore) -> ConnectionThread {
        if let current, current.connection == connection { return current }
        if let old = pthread_getspecific(key) { Unmanaged<ConnectionThread>.fromOpaque(old).release() }
        let state = ConnectionThread(connection: connection, core: core)
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
        return state
    }

    /// Released when the thread ends.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { state in
            if let state { Unmanaged<ConnectionThread>.fromOpaque(state).release() }
        }
        return key
    }()
}
