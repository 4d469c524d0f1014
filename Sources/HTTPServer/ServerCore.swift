import CMicroHTTPD
import Synchronization

/// The part of a server that libmicrohttpd's callbacks reach through their `cls` pointer,
/// on its polling threads: the handler, the limits, and the counters `stop()` waits on.
///
/// Plain `Sendable`: every stored property is immutable or a `Mutex`/`Atomic`.
final class ServerCore: Sendable {
    let handler: HTTPDeferringHandler
    /// Requests whose connections are suspended until their handler answers (for `stop()`).
    let suspended = SuspendedRequests()
    let maxBodyBytes: Int
    /// How much of an over-limit chunked body, counted from the limit, is read and discarded,
    /// hoping to reach its end and answer 413, before the connection is closed without an answer.
    let maxDiscardedBytes: Int
    let maxInflightBodyBytes: Int
    /// Body bytes the requests in flight hold (`reserveBody`).
    let inflightBodyBytes = Atomic(0)
    let defaultHeaders: [(name: String, value: String)]
    /// `defaultHeaders`' names, lowercased once.
    let defaultHeaderNames: [String]
    let errorLog: (@Sendable (String) -> Void)?
    let serverAnswered: (@Sendable (_ path: String, _ status: Int) -> Void)?
    let checkBeforeContinue: (@Sendable (HTTPRequest) -> HTTPResponse?)?
    let beforeResume: (@Sendable () -> Void)?
    /// Requests presented to the access handler whose completion has not been reported yet.
    /// An atomic, not a `Mutex`: every request changes it twice, on every polling thread.
    let inFlight = Atomic(0)
    /// Answers between their request's lock and the end of their `MHD_resume_connection`
    /// (`HTTPResponder`): `stop()` waits for none to be under way before stopping the daemon.
    let resumesUnderWay = Atomic(0)
    /// Connections open (reported started and not yet closed), for `maxConnections`.
    let openConnections = Atomic(0)
    let maxConnections: Int
    /// Set by `stop()`: responses then carry `Connection: close` so keep-alive connections drain.
    let stopping = Atomic(false)
    /// Closes connections too slow to send a request or take a response (slowloris).
    let watchdog: ConnectionWatchdog
    /// libmicrohttpd's messages while the daemon starts (nil once started), for the thrown error.
    private let startupLog = Mutex<[String]?>([])

    init(configuration: HTTPServer.Configuration, handler: @escaping HTTPDeferringHandler) {
        self.handler = handler
        self.maxBodyBytes = configuration.maxBodyBytes
        self.maxConnections = configuration.maxConnections
        self.maxDiscardedBytes = max(configuration.maxBodyBytes, 64 << 10)
        self.maxInflightBodyBytes = configuration.maxInflightBodyBytes
        self.defaultHeaders = configuration.defaultHeaders
        self.defaultHeaderNames = configuration.defaultHeaders.map { $0.name.lowercased() }
        self.errorLog = configuration.errorLog
        self.serverAnswered = configuration.serverAnswered
        self.checkBeforeContinue = configuration.checkBeforeContinue
        self.beforeResume = configuration.beforeResume
        let errorLog = configuration.errorLog
        self.watchdog = ConnectionWatchdog(limitSeconds: configuration.connectionTimeoutSeconds) { errorLog?($0) }
    }

    /// The core as one polling thread hands it to the responders it makes: a responder retains
    /// its thread's handle, not the core, whose reference count every polling thread would
    /// otherwise write for every request (one cache line for all the processors).
    final class Handle: Sendable {
        let core: ServerCore

        init(_ core: ServerCore) { self.core = core }
    }

    /// Records one diagnostic from libmicrohttpd (or from this module).
    func log(_ message: String) {
        startupLog.withLock { messages in
            if messages != nil { messages!.append(message) }
        }
        errorLog?(message)
    }

    /// Ends start-up; returns what was logged during it.
    func finishStartup() -> [String] {
        startupLog.withLock { messages in
            defer { messages = nil }
            return messages ?? []
        }
    }

    /// Answers a body over `maxBodyBytes` (413) and closes the connection afterwards (the rest
    /// of the body is never read); `serverAnswered` is told.
    func queueBodyTooLarge(on connection: OpaquePointer, path: String) -> MHD_Result {
        queueRefusal(status: 413, message: bodyTooLargeMessage, on: connection, path: path)
    }

    var bodyTooLargeMessage: String { "request body exceeds \(maxBodyBytes) bytes" }

    /// Takes `bytes` more of the in-flight body budget for `context`; false, taking nothing,
    /// when that would go over `maxInflightBodyBytes` while other requests hold some of it.
    func reserveBody(_ bytes: Int, for context: RequestContext) -> Bool {
        guard let taken = takeInflight(bytes, beyond: 0) else { return false }
        context.reservedBodyBytes += taken
        return true
    }

    /// The budget's one rule: takes `bytes` unless the total would go over
    /// `maxInflightBodyBytes` while more than `beyond` bytes are held (a request's own, when it
    /// holds more for what it made of its body: alone, it always fits). What was taken (0 with
    /// no budget), or nil, taking nothing.
    func takeInflight(_ bytes: Int, beyond: Int) -> Int? {
        guard maxInflightBodyBytes > 0, bytes > 0 else { return 0 }
        var held = inflightBodyBytes.load(ordering: .relaxed)
        while true {
            if held > beyond, held + bytes > maxInflightBodyBytes { return nil }
            let (exchanged, original) = inflightBodyBytes.compareExchange(expected: held, desired: held + bytes,
                                                                         ordering: .relaxed)
            if exchanged { return bytes }
            held = original
        }
    }

    /// Gives back what `context` holds of the budget (idempotent).
    func releaseBody(of context: RequestContext) {
        guard context.reservedBodyBytes > 0 else { return }
        inflightBodyBytes.wrappingSubtract(context.reservedBodyBytes, ordering: .relaxed)
        context.reservedBodyBytes = 0
    }

    /// Answers 503 with `Retry-After` to a request whose body would go over the budget, and
    /// closes the connection afterwards (its body, if any, is never read).
    func queueOverBudget(on connection: OpaquePointer, path: String) -> MHD_Result {
        queueRefusal(status: 503, message: "too many request bodies in flight (\(maxInflightBodyBytes) bytes): retry shortly",
                     on: connection, path: path, headers: [(name: "Retry-After", value: "1")])
    }

    /// Answers `status` with `{"error": message}` and closes the connection afterwards (a body,
    /// if any, is never read); `serverAnswered` is told.
    func queueRefusal(status: Int, message: String, on connection: OpaquePointer, path: String,
                      headers: [(name: String, value: String)] = []) -> MHD_Result {
        serverAnswered?(path, status)
        let response = HTTPResponse(status: status, headers: [(name: "Content-Type", value: "application/json")] + headers,
                                    body: Self.errorBody(message))
        return queue(response, on: connection, closeConnection: true)
    }

    /// `{"error":"message"}`, escaped as JSON (`<`, `>` and `&` too, as the API does).
    static func errorBody(_ message: String) -> [UInt8] {
        var body = Array("{\"error\":\"".utf8)
        let hex = Array("0123456789abcdef".utf8)
        for byte in message.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                body += [UInt8(ascii: "\\"), byte]
            case 0..<0x20, UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"):
                body += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default:
                body.append(byte)
            }
        }
        return body + Array("\"}".utf8)
    }

    /// Writes the server's own 431 for a head `RequestHead` finds too large, on the socket: the
    /// connection's memory may have no room left to build an answer through libmicrohttpd (it
    /// then closed the connection unanswered). The caller returns `.NO`, and libmicrohttpd
    /// closes the connection.
    func answerHeadTooLarge(on connection: OpaquePointer, path: String, method: String) {
        WorkerThread.current.record(connection).answeredDirectly = true
        serverAnswered?(path, 431)
        DirectAnswer.send(status: 431, message: RequestHead.tooLargeMessage, defaultHeaders: defaultHeaders,
                          includeBody: method != "HEAD", to: CMicroHTTPD_connection_fd(connection))
    }

    /// libmicrohttpd logged that it is about to answer `status` with `page` (its fixed HTML) and
    /// close the connection: a request it refused before or without the access handler (a
    /// malformed header line, `Content-Length` or chunk, a head too large for its memory, an
    /// unsupported HTTP version on a connection already used). Its page cannot be given the
    /// default headers, and for a bad `Content-Length` 0.9.75 even writes its head twice, so
    /// the server answers first, on the socket (`DirectAnswer`), and libmicrohttpd's own answer
    /// then fails to send. The message names no connection: the server answers only when one
    /// connection of this polling thread alone can be the one refused
    /// (``WorkerThread/libraryErrorConnection(_:)``); otherwise libmicrohttpd's page stays,
    /// as it does for a connection's first request refused before its request line was parsed.
    func answerLibraryError(status: Int, page: String) {
        let thread = WorkerThread.current
        let stage = WorkerThread.RefusedStage(page: page)
        guard let record = thread.libraryErrorConnection(stage) else { return }
        let fd = CMicroHTTPD_connection_fd(record.connection)
        guard fd >= 0 else { return }
        record.answeredDirectly = true
        inFlight.wrappingAdd(1, ordering: .relaxed)
        record.holdsInFlight = true
        let (answer, message) = libraryErrorAnswer(status: status, stage: stage, on: record.connection)
        if let path = record.context?.sentPath { serverAnswered?(path, answer) }
        DirectAnswer.send(status: answer, message: message, defaultHeaders: defaultHeaders, includeBody: true, to: fd)
    }

    /// The server's status and words for one of libmicrohttpd's error pages (its status, and
    /// the stage its page names). libmicrohttpd calls any `Content-Length` that starts with a
    /// digit and overflows 64 bits too large (413); only digits are a length, too large for any
    /// cap, and anything else is malformed.
    func libraryErrorAnswer(status: Int, stage: WorkerThread.RefusedStage,
                            on connection: OpaquePointer) -> (status: Int, message: String) {
        switch status {
        case 400 where stage == .headers, 413 where stage == .headers:
            let length = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length").map { String(cString: $0) }
            if status == 413, let length, !length.isEmpty, length.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
                return (413, bodyTooLargeMessage)
            }
            return (400, RequestHead.badLengthMessage)
        case 400 where stage == .chunkedBody: return (400, "malformed chunked body")
        case 400: return (400, "malformed request")
        case 413: return (413, bodyTooLargeMessage)
        case 414: return (414, "request line too long")
        case 431: return (431, RequestHead.tooLargeMessage)
        case 505: return (505, "HTTP version not supported: use HTTP/1.1")
        default: return (status, "request refused")
        }
    }

    /// Builds the request from what libmicrohttpd parsed and runs the handler, which answers
    /// through `responder` now or later.
    func run(connection: OpaquePointer, method: String, context: RequestContext, path: String,
             body: [UInt8], responder: HTTPResponder) {
        var request = request(connection: connection, method: method, context: context, path: path, body: body)
        request.inflightBudget = responder
        handler(request, responder)
    }

    /// The request as a handler sees it: the header fields collected on the first call, the
    /// query arguments, and for an absolute-form target its authority as `host`.
    func request(connection: OpaquePointer, method: String, context: RequestContext, path: String,
                 body: [UInt8]) -> HTTPRequest {
        var query: [String: String] = [:]
        for (name, value) in ValueCollector.values(of: .GET_ARGUMENT_KIND, on: connection) {
            query[name] = value
        }
        var fields = context.fields
        if let authority = context.authority {
            // RFC 9112 section 3.2.2: the target's authority, not a Host field, names the host.
            fields = fields.replacing("host", with: authority)
        }
        return HTTPRequest(method: method, path: path, query: query, fields: fields,
                           body: body, remoteAddress: context.connection.map { $0.remoteAddress(of: connection) }
                               ?? CMicroHTTPD_client_address(connection).flatMap { SocketAddress.host(of: $0) })
    }

    /// Queues `response` plus the default headers; `closeConnection` adds `Connection: close`
    /// (also added while stopping). Returns libmicrohttpd's verdict: `.NO` closes the connection.
    func queue(_ response: HTTPResponse, on connection: OpaquePointer, closeConnection: Bool) -> MHD_Result {
        var status = response.status
        if !(100...999).contains(status) {
            log("HTTPServer: handler returned status \(status); answering 500 instead")
            status = 500
        }
        let closes = closeConnection || stopping.load(ordering: .relaxed)
        let responses = WorkerThread.Connection.of(connection)?.responses ?? WorkerThread.current.responses
        if let kept = responses.response(status: status, closes: closes, headers: response.headers, body: response.body) {
            return queue(kept, status: status, on: connection)
        }
        guard let made = make(response, closes: closes) else {
            log("HTTPServer: libmicrohttpd could not allocate a response; closing the connection")
            return .NO
        }
        let result = queue(made, status: status, on: connection)
        // Queued, libmicrohttpd holds its own reference: the cache's, or none, remains.
        if !responses.keep(made, status: status, closes: closes, headers: response.headers, body: response.body) {
            MHD_destroy_response(made)
        }
        return result
    }

    private func queue(_ response: OpaquePointer, status: Int, on connection: OpaquePointer) -> MHD_Result {
        let result = MHD_queue_response(connection, UInt32(status), response)
        if result == .NO {
            log("HTTPServer: libmicrohttpd refused to queue a \(status) response; closing the connection")
        }
        return result
    }

    /// A libmicrohttpd response with `response`'s body and headers (its `Content-Length`
    /// left to libmicrohttpd), the default headers it does not override, and `Connection:
    /// close` if `closes` and it sets no `Connection` itself; nil if libmicrohttpd has no memory.
    private func make(_ response: HTTPResponse, closes: Bool) -> OpaquePointer? {
        let mhdResponse = response.answerHold.map { HeldBody.response(response.body, holding: $0) }
            ?? response.body.withUnsafeBytes { bytes in
                MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                                                .RESPMEM_MUST_COPY)
            }
        guard let mhdResponse else { return nil }
        // A handler's headers are few: a small array, not a set, of their lowercased names.
        var names: [String] = []
        names.reserveCapacity(response.headers.count)
        for header in response.headers {
            let name = header.name.lowercased()
            // libmicrohttpd computes Content-Length itself and refuses one set by hand.
            if name == "content-length" { continue }
            names.append(name)
            add(header, to: mhdResponse)
        }
        for (i, header) in defaultHeaders.enumerated() where !names.contains(defaultHeaderNames[i]) {
            add(header, to: mhdResponse)
        }
        if closes && !names.contains("connection") {
            add((name: "Connection", value: "close"), to: mhdResponse)
        }
        return mhdResponse
    }

    private func add(_ header: (name: String, value: String), to response: OpaquePointer) {
        if MHD_add_response_header(response, header.name, header.value) == .NO {
            // libmicrohttpd rejects names or values containing CR, LF or other forbidden bytes.
            log("HTTPServer: dropped response header \"\(header.name)\": libmicrohttpd refused it")
        }
    }
}

/// A body libmicrohttpd sends from a copy of its own that holds part of the in-flight budget
/// (``AnswerHold``) until libmicrohttpd lets the response go: sent, or its connection closed.
private final class HeldBody {
    let bytes: UnsafeMutableRawBufferPointer
    let hold: AnswerHold

    private init(_ body: [UInt8], hold: AnswerHold) {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, body.count), alignment: 1)
        body.withUnsafeBytes { copy.copyMemory(from: $0) }
        bytes = copy
        self.hold = hold
    }

    deinit { bytes.deallocate() }

    /// A libmicrohttpd response over a copy of `body`, which keeps `hold` until it is let go;
    /// nil if libmicrohttpd has no memory.
    static func response(_ body: [UInt8], holding hold: AnswerHold) -> OpaquePointer? {
        let held = HeldBody(body, hold: hold)
        let cls = Unmanaged.passRetained(held).toOpaque()
        let response = MHD_create_response_from_buffer_with_free_callback_cls(body.count, held.bytes.baseAddress, { cls in
            if let cls { Unmanaged<HeldBody>.fromOpaque(cls).release() }
        }, cls)
        if response == nil { Unmanaged<HeldBody>.fromOpaque(cls).release() }
        return response
    }
}
