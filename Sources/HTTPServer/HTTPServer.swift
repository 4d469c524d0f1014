import CMicroHTTPD
import Glibc
import Synchronization

/// A small HTTP/1.1 server over libmicrohttpd that hands each complete request to one
/// ``HTTPHandler`` and sends back the ``HTTPResponse`` it returns.
///
/// ## Threading model
/// The daemon is event-driven: libmicrohttpd's internal thread pool with epoll
/// (`MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL`, `threadPoolSize` threads, one per core by
/// default), never a thread per connection. Each connection stays with the polling thread that
/// accepted it, which reads its requests, calls the handler, and writes its responses. So:
/// - the handler runs on a libmicrohttpd thread, never on the main actor or a Swift
///   concurrency executor, and may run on several threads at once: it keeps shared state
///   behind a `Mutex`, and its type is `@Sendable` so that it is never main-actor isolated
///   (a main-actor closure, e.g. one written at the top level of `main.swift`, would trap);
/// - the handler must not block: while it runs, no other connection of its thread is served.
///   Work that waits (a durable commit) takes an ``HTTPDeferringHandler``: it answers through
///   an ``HTTPResponder`` from any thread, later; the connection is suspended meanwhile
///   (`MHD_suspend_connection`, `MHD_ALLOW_SUSPEND_RESUME`) and holds no thread, then resumed
///   (`MHD_resume_connection`) by the answer;
/// - keep-alive is supported: a connection's requests are served one after another;
/// - thousands of idle connections cost their sockets and buffers only.
///
/// The handler is called once the whole body is in memory (at most `maxBodyBytes`; a larger
/// one is answered 413 and the connection closed, without buffering it: see
/// ``Configuration/maxBodyBytes``). Responses are queued only on libmicrohttpd's final call
/// for a request, never on the first, which in libmicrohttpd 0.9.75 would cost keep-alive;
/// refusals from the head alone are the exception, and close the connection on purpose: an
/// ambiguous body length (request smuggling), a transfer or content coding the server does not
/// decode, HTTP/1.1 without `Host`, a head over 24 KiB or with bytes libmicrohttpd does not
/// hand on (`RequestHead`). libmicrohttpd's own refusals are answered in its place, as JSON
/// with the default headers, whenever the polling thread can tell which connection it refuses
/// (`ServerCore.answerLibraryError`); otherwise its HTML page goes out.
///
/// ## Lifetime
/// `init` binds and starts serving; ``stop()`` stops listening (new connections are refused
/// at once), waits for requests being handled (up to `shutdownGracePeriodSeconds`), then closes
/// every connection. `deinit`
/// calls `stop()`, but a handler that captures its own server keeps it alive: call `stop()`.
/// `stop()` may be called from any thread, e.g. one that waits for SIGTERM with a
/// `DispatchSourceSignal` or `sigwait`, but not from inside a handler (it would wait for that
/// handler's own thread) nor from an asynchronous signal handler (it takes locks). Requests
/// still suspended when the grace period ends are resumed and closed unanswered (libmicrohttpd
/// refuses to stop with suspended connections); a later answer to them is dropped.
public final class HTTPServer: Sendable {
    /// The port the server is bound to; the real one even when configured as 0.
    public let port: Int

    private let core: ServerCore
    private let gracePeriodSeconds: Double
    /// The running daemon; nil once stopped. The lock also makes concurrent `stop()` calls
    /// wait until the first one has finished.
    private let daemon: Mutex<OpaquePointer?>

    /// Binds `configuration.host`:`configuration.port` and starts serving with `handler`.
    /// - Throws: ``HTTPServerError`` when the host is not an address literal, a limit is out
    ///   of range, or the address cannot be bound (e.g. "cannot bind 127.0.0.1:8080: …
    ///   Address already in use").
    ///
    /// `handler` may block (it waits, say, for a lock or a slow resource): each request runs it
    /// on a thread of its own, off the polling threads, and its connection is suspended until it
    /// returns, so a blocked handler holds only its own request. Quick handlers that must not pay
    /// for a thread take ``init(configuration:answering:)`` and answer inline.
    public convenience init(configuration: Configuration, handler: @escaping HTTPHandler) throws(HTTPServerError) {
        try self.init(configuration: configuration, answering: { request, responder in
            DetachedThread.start { responder.respond(handler(request)) }
        })
    }

    /// Binds `configuration.host`:`configuration.port` and starts serving with `handler`, which
    /// answers each request through its ``HTTPResponder``, at once or later.
    public init(configuration: Configuration, answering handler: @escaping HTTPDeferringHandler) throws(HTTPServerError) {
        try Self.validate(configuration)
        let address = try SocketAddress(host: configuration.host, port: configuration.port)
        let core = ServerCore(configuration: configuration, handler: handler)
        Self.raiseDescriptorLimit(toAtLeast: configuration.maxConnections + Self.spareDescriptors)

        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue
            | MHD_USE_EPOLL.rawValue            // epoll: no descriptor limit, no per-call scan of idle connections
            | MHD_ALLOW_SUSPEND_RESUME.rawValue // deferred answers (implies MHD_USE_ITC: resumes wake the threads)
            | MHD_USE_ITC.rawValue
            | MHD_USE_ERROR_LOG.rawValue        // to the logger below, which explains start-up failures
        if address.isIPv6 {
            flags |= MHD_USE_DUAL_STACK.rawValue
        }
        let coreAddress = Unmanaged.passUnretained(core).toOpaque()
        let started = address.withSockaddrPointer { sockaddr -> OpaquePointer? in
            var options: [MHD_OptionItem] = [
                // First, or libmicrohttpd prints the messages about earlier options itself.
                // Options taking two pointers want the function pointer cast to intptr_t.
                MHD_OptionItem(option: .EXTERNAL_LOGGER,
                               value: unsafeBitCast(logCallback, to: Int.self), ptr_value: coreAddress),
                MHD_OptionItem(option: .SOCK_ADDR, value: 0,
                               ptr_value: UnsafeMutableRawPointer(mutating: sockaddr)),
                MHD_OptionItem(option: .CONNECTION_TIMEOUT,
                               value: configuration.connectionTimeoutSeconds, ptr_value: nil),
                // libmicrohttpd splits its limit between the polling threads, and a thread at its
                // share stops accepting: each may hold all of ours plus one, and `acceptPolicy`
                // closes the connections beyond `maxConnections` as soon as they are accepted.
                MHD_OptionItem(option: .CONNECTION_LIMIT,
                               value: min((configuration.maxConnections + 1) * configuration.threadPoolSize, Int(UInt32.max)),
                               ptr_value: nil),
                MHD_OptionItem(option: .PER_IP_CONNECTION_LIMIT,
                               value: configuration.maxConnectionsPerIP, ptr_value: nil),
                // Per-connection pool for headers and read/write buffers: the library's default
                // 32 KiB (a larger one is mapped per connection and zeroed per request). Heads over
                // 24 KiB are answered 431 by the server itself, so that a response always has room
                // (RequestHead.maxBytes).
                MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: RequestHead.connectionMemory, ptr_value: nil),
                // The request target as sent, before libmicrohttpd decodes it (see requestStarted).
                MHD_OptionItem(option: .URI_LOG_CALLBACK,
                               value: unsafeBitCast(requestStartedCallback, to: Int.self),
                               ptr_value: coreAddress),
                MHD_OptionItem(option: .NOTIFY_COMPLETED,
                               value: unsafeBitCast(requestCompletedCallback, to: Int.self),
                               ptr_value: coreAddress),
                MHD_OptionItem(option: .NOTIFY_CONNECTION,
                               value: unsafeBitCast(connectionNotifiedCallback, to: Int.self),
                               ptr_value: coreAddress),
            ]
            // A pool of one is the internal polling thread alone, and libmicrohttpd logs a warning
            // at every start when told so ("Thread pool is not used"): on a one-processor machine,
            // the default.
            if configuration.threadPoolSize > 1 {
                options.append(MHD_OptionItem(option: .THREAD_POOL_SIZE, value: configuration.threadPoolSize, ptr_value: nil))
            }
            options.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
            return options.withUnsafeBufferPointer { items in
                CMicroHTTPD_start_daemon(flags, UInt16(configuration.port), acceptPolicy, accessHandler, coreAddress,
                                         items.baseAddress)
            }
        }
        let startupMessages = core.finishStartup()
        guard let started else {
            let reason = startupMessages.isEmpty
                ? "libmicrohttpd could not start the daemon"
                : startupMessages.joined(separator: "; ")
            throw .cannotBind(address: address.description, reason: reason)
        }
        let bound = Int(CMicroHTTPD_bind_port(started))
        self.port = bound != 0 ? bound : configuration.port
        self.core = core
        self.gracePeriodSeconds = configuration.shutdownGracePeriodSeconds
        self.daemon = Mutex(started)
        core.watchdog.start()
    }

    deinit {
        stop()
    }

    /// Requests presented to a handler and not completed yet (for tests).
    var requestsInFlight: Int { core.inFlight.load(ordering: .acquiring) }
    /// Requests whose connection is suspended waiting for their answer (for tests).
    var suspendedRequests: Int { core.suspended.count }
    /// Connections open (for tests).
    var openConnections: Int { core.openConnections.load(ordering: .relaxed) }

    /// Stops the server: it stops listening at once (new connections are refused, not left
    /// waiting), requests already being handled are answered (for up to
    /// `shutdownGracePeriodSeconds`; their responses carry `Connection: close`), then every
    /// connection is closed and the daemon's threads joined. Requests still unanswered when
    /// the grace period ends are cut off, and `errorLog` gets one line with their count.
    ///
    /// Idempotent, and safe from any thread except a handler's own (it would wait for itself);
    /// concurrent calls return once the server is stopped.
    public func stop() {
        daemon.withLock { running in
            guard let started = running else { return }
            running = nil
            core.stopping.store(true, ordering: .relaxed)
            core.watchdog.stop()
            // Stop accepting first, so that new connections are refused at once rather than left
            // in the backlog until MHD_stop_daemon. Not with MHD_quiesce_daemon: with a thread
            // pool and epoll, 0.9.75 races the polling threads for the listening socket's place
            // in their epoll sets and aborts the process when it loses ("Failed to remove listen
            // FD from epoll set"). Instead the listening socket is closed under libmicrohttpd by
            // putting an eventfd, which never becomes readable, in its descriptor's place
            // (dup2): the socket goes (the kernel refuses new connections and resets queued
            // ones), leaves every epoll set with its last reference, and its number stays taken
            // until MHD_stop_daemon closes it, so it can never name another file meanwhile.
            let listening = CMicroHTTPD_listen_fd(started)
            let placeholder = CMicroHTTPD_placeholder_fd()
            if listening < 0 || placeholder < 0 || dup2(placeholder, listening) < 0 {
                core.log("HTTPServer: could not stop listening (\(String(cString: strerror(errno)))); "
                         + "new connections wait until the server has stopped")
            }
            if placeholder >= 0 { close(placeholder) }
            let deadline = Self.monotonicSeconds() + gracePeriodSeconds
            while core.inFlight.load(ordering: .acquiring) > 0 && Self.monotonicSeconds() < deadline {
                usleep(5_000)
            }
            let unanswered = core.inFlight.load(ordering: .acquiring)
            if unanswered > 0 {
                core.log("HTTPServer: shutdown grace period (\(Self.seconds(gracePeriodSeconds))) over: "
                         + "closing \(unanswered) connection\(unanswered == 1 ? "" : "s") whose request was not answered")
            }
            // libmicrohttpd aborts the process if it is stopped with connections suspended: resume
            // the ones still waiting for their answer, to be closed unanswered (under each one's
            // lock), and wait for the resumes of answers given meanwhile to be made.
            for responder in core.suspended.close() { responder.abandon() }
            while core.resumesUnderWay.load(ordering: .acquiring) > 0 { sched_yield() }
            MHD_stop_daemon(started)
        }
    }

    /// Raises the open-files soft limit as a server of `maxConnections` would (for benchmarks
    /// that run libmicrohttpd directly beside it).
    public static func raiseDescriptorLimitForBench(_ maxConnections: Int) {
        raiseDescriptorLimit(toAtLeast: maxConnections + spareDescriptors)
    }

    /// Descriptors kept beyond one per connection: listening socket, epoll and event descriptors
    /// of each polling thread, the database, logs.
    static let spareDescriptors = 256

    /// Raises the soft limit on open files (`ulimit -n`, often 1,024) toward `wanted`, within the
    /// hard limit: each connection is a descriptor, and `maxConnections` may be thousands.
    static func raiseDescriptorLimit(toAtLeast wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(limit.rlim_max, rlim_t(wanted))
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    private static func validate(_ configuration: Configuration) throws(HTTPServerError) {
        func check(_ ok: Bool, _ reason: String) throws(HTTPServerError) {
            if !ok { throw .invalidConfiguration(reason) }
        }
        try check((0...65535).contains(configuration.port), "port \(configuration.port) is not in 0…65535")
        try check(configuration.maxBodyBytes >= 0, "maxBodyBytes must not be negative")
        try check((1...Int(UInt32.max)).contains(configuration.maxConnections), "maxConnections must be at least 1")
        try check((0...Int(UInt32.max)).contains(configuration.maxConnectionsPerIP),
                  "maxConnectionsPerIP must not be negative")
        try check((1...Int(UInt32.max)).contains(configuration.connectionTimeoutSeconds),
                  "connectionTimeoutSeconds must be at least 1 (0 would mean no timeout)")
        try check(configuration.shutdownGracePeriodSeconds >= 0, "shutdownGracePeriodSeconds must not be negative")
        try check((1...1024).contains(configuration.threadPoolSize), "threadPoolSize must be in 1…1024")
    }

    /// "10 s", "0.5 s".
    private static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? "\(Int(value)) s" : "\(value) s"
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

/// Runs a closure on a new detached thread (for handlers that may block).
enum DetachedThread {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    static func start(_ body: @escaping @Sendable () -> Void) {
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let created = pthread_create(&thread, &attributes, { box in
            let body = Unmanaged<Box>.fromOpaque(box!).takeRetainedValue().body
            body()
            return nil
        }, box)
        if created != 0 {
            // No thread to be had: run it here rather than never answer.
            Unmanaged<Box>.fromOpaque(box).takeRetainedValue().body()
        }
    }
}

/// `requestStarted`, `requestCompleted`, `logMessage` and `connectionNotified` as C function
/// pointers, to be cast to `intptr_t`. microhttpd.h declares no type for the URI log callback.
private let requestStartedCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?)
    -> UnsafeMutableRawPointer? = requestStarted
private let requestCompletedCallback: MHD_RequestCompletedCallback = requestCompleted
private let logCallback: MHD_LogCallback = logMessage
private let connectionNotifiedCallback: MHD_NotifyConnectionCallback = connectionNotified
