import CMicroHTTPD
import Glibc

// The C callbacks given to libmicrohttpd. They are global functions, hence nonisolated:
// libmicrohttpd calls them synchronously on its polling threads (a connection always on the same one). `cls` is always the daemon's
// ServerCore (retained by HTTPServer until MHD_stop_daemon has returned). They borrow it
// (`_withUnsafeGuaranteedRef`) rather than retain it: every polling thread would otherwise
// write its reference count a few times per request, one cache line for all the processors.

/// `MHD_AccessHandlerCallback`. libmicrohttpd calls it at least twice per request:
/// first when the headers are in (set up the context), then once per piece of body
/// (`*uploadDataSize > 0`), and finally with `*uploadDataSize == 0` (run the handler, queue its
/// answer, or suspend the connection until it answers); after a resume, once more (queue it).
func accessHandler(cls: UnsafeMutableRawPointer?, connection: OpaquePointer?,
                   url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
                   version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?,
                   uploadDataSize: UnsafeMutablePointer<Int>?,
                   requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> MHD_Result {
    guard let cls, let connection, let uploadDataSize, let requestContext else { return .NO }
    return Unmanaged<ServerCore>.fromOpaque(cls)._withUnsafeGuaranteedRef { core in
        handleAccess(core: core, connection: connection, url: url, method: method, version: version,
                     uploadData: uploadData, uploadDataSize: uploadDataSize, requestContext: requestContext)
    }
}

/// `accessHandler`'s work, with the core borrowed.
private func handleAccess(core: ServerCore, connection: OpaquePointer,
                          url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
                          version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?,
                          uploadDataSize: UnsafeMutablePointer<Int>,
                          requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
    let context: RequestContext
    if let existing = requestContext.pointee {
        context = Unmanaged<RequestContext>.fromOpaque(existing).takeUnretainedValue()
    } else {
        // requestStarted makes one for every request; this is only a safety net.
        context = RequestContext(target: nil)
        requestContext.pointee = Unmanaged.passRetained(context).toOpaque()
    }
    if !context.started {
        // First call: headers only. Do not queue a normal response yet: in libmicrohttpd
        // 0.9.75 a response queued on the first call closes the connection (keep-alive lost).
        // Refusals are queued here all the same: they close the connection on purpose, their
        // body unread (and before any "100 Continue").
        context.started = true
        core.inFlight.wrappingAdd(1, ordering: .relaxed)
        let head = RequestHead(connection: connection, method: method, version: version, context: context)
        context.fields = head.fields
        let path = context.path(decodedURL: url)
        let framing: RequestHead.Framing
        switch head.check() {
        case .success(let sound):
            framing = sound
        case .failure(let refusal) where refusal.status == 431:
            // Written on the socket: the connection's memory may have no room left for a response.
            context.responded = true
            core.answerHeadTooLarge(on: connection, path: path, method: head.method)
            return .NO
        case .failure(let refusal):
            context.responded = true
            defer { core.watchdog.restart(connection) }
            return core.queueRefusal(status: refusal.status, message: refusal.message, on: connection, path: path)
        }
        if let declared = framing.contentLength, declared > UInt64(core.maxBodyBytes) {
            // Answer before the client sends the body (and before "100 Continue"): the body is
            // never read, so the connection must close afterwards.
            context.bodyTooLarge = true
            context.responded = true
            defer { core.watchdog.restart(connection) }
            return core.queueBodyTooLarge(on: connection, path: path)
        }
        if head.expectsContinue, let check = core.checkBeforeContinue {
            // libmicrohttpd sends "100 Continue" when this call returns without a response.
            let request = core.request(connection: connection, method: head.method, context: context,
                                       path: path, body: [])
            if let refusal = check(request) {
                context.responded = true
                defer { core.watchdog.restart(connection) }
                return core.queue(refusal, on: connection, closeConnection: true)
            }
        }
        let declared = Int(min(framing.contentLength ?? 0, UInt64(core.maxBodyBytes)))
        if !core.reserveBody(declared, for: context) {
            context.bodyOverBudget = true
            context.responded = true
            defer { core.watchdog.restart(connection) }
            return core.queueOverBudget(on: connection, path: path)
        }
        context.chunked = framing.chunked
        context.body.reserveCapacity(declared)
        return .YES
    }

    let size = uploadDataSize.pointee
    if size > 0 {
        uploadDataSize.pointee = 0
        if context.bodyTooLarge || context.bodyOverBudget {
            context.discardedBytes += size
            if context.discardedBytes > core.maxDiscardedBytes {
                core.log("HTTPServer: closing a connection whose request body went on past "
                         + "\(core.maxBodyBytes) + \(core.maxDiscardedBytes) bytes")
                return .NO
            }
            return .YES
        }
        if context.body.count + size > core.maxBodyBytes {
            // A chunked body went over the limit. libmicrohttpd 0.9.75 refuses MHD_queue_response
            // while a body is being received, so stop buffering, discard the rest (up to
            // maxDiscardedBytes past the limit) and answer 413 on the final call. What was
            // buffered up to the limit is not counted: with a limit of 64 KiB or more it alone
            // would use up the allowance, and the next piece would drop the connection unanswered.
            context.bodyTooLarge = true
            context.discardedBytes = context.body.count + size - core.maxBodyBytes
            context.body = []
            return .YES
        }
        // A chunked body (or one longer than declared) takes the budget as it arrives.
        let beyondReserved = context.body.count + size - context.reservedBodyBytes
        if beyondReserved > 0, !core.reserveBody(beyondReserved, for: context) {
            context.bodyOverBudget = true
            context.discardedBytes = size
            context.body = []
            core.releaseBody(of: context)
            return .YES
        }
        if let uploadData {
            context.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: size))
        }
        return .YES
    }

    if let responder = context.responder {
        // Called again after MHD_resume_connection: the handler has answered, or stop() gave up.
        switch responder.afterResume() {
        case .answer(let answer):
            defer { core.watchdog.restart(connection) }
            return core.queue(answer.response, on: connection, closeConnection: false)
        case .abandoned:
            return .NO
        case .nothing:
            return .YES
        }
    }
    // Final call: the whole request is in.
    if context.responded { return .YES }
    context.responded = true
    context.bodyComplete = true
    // The response's own deadline starts once it is queued; none while the handler runs.
    if context.bodyTooLarge {
        defer { core.watchdog.restart(connection) }
        return core.queueBodyTooLarge(on: connection, path: context.path(decodedURL: url))
    }
    if context.bodyOverBudget {
        defer { core.watchdog.restart(connection) }
        return core.queueOverBudget(on: connection, path: context.path(decodedURL: url))
    }
    core.watchdog.handling(connection)
    // The request's body budget goes with the responder: given back when the answer is given.
    let responder = HTTPResponder(connection: connection, core: context.connection?.core ?? ServerCore.Handle(core),
                                  reservedBodyBytes: context.reservedBodyBytes)
    context.reservedBodyBytes = 0
    context.responder = responder
    core.run(connection: connection,
             method: method.map { String(cString: $0) } ?? "",
             context: context,
             path: context.path(decodedURL: url),
             body: context.body,
             responder: responder)
    context.body = []
    guard let response = responder.handlerReturned() else {
        // Suspended: resumed when the handler answers (the deadline stays off meanwhile).
        return .YES
    }
    defer { core.watchdog.restart(connection) }
    return core.queue(response, on: connection, closeConnection: false)
}

/// `MHD_OPTION_URI_LOG_CALLBACK`: called once per request, as soon as its request line is in,
/// with the request target exactly as sent, before libmicrohttpd splits off the query and
/// percent-decodes its own copy in place (the `url` the access handler gets). The result
/// becomes the request's `*con_cls`; libmicrohttpd then always reports the request's end to
/// `requestCompleted`, which releases it.
///
/// The undecoded path is what routing needs: decoded first, `/api/bookings/2026%2F1042`
/// becomes three segments. The option is used rather than `MHD_OPTION_UNESCAPE_CALLBACK`,
/// which decodes the path and the query arguments alike and so could not leave one undecoded.
func requestStarted(cls: UnsafeMutableRawPointer?, uri: UnsafePointer<CChar>?,
                    connection: OpaquePointer?) -> UnsafeMutableRawPointer? {
    let context = RequestContext(target: uri.map { String(cString: $0) }, targetByteCount: uri.map { strlen($0) })
    if cls != nil, let connection {
        // For the log callback, which must tell which connection libmicrohttpd's own error
        // answers are for (`WorkerThread.libraryErrorConnection`).
        let record = WorkerThread.Connection.of(connection) ?? WorkerThread.current.record(connection)
        record.context = context
        context.connection = record
    }
    return Unmanaged.passRetained(context).toOpaque()
}

/// `MHD_RequestCompletedCallback`: releases the request's context, however the request ended
/// (answered, timed out, client gone, refused by libmicrohttpd before the access handler ran,
/// daemon stopped).
func requestCompleted(cls: UnsafeMutableRawPointer?, connection: OpaquePointer?,
                      requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                      termination: MHD_RequestTerminationCode) {
    guard let cls else { return }
    Unmanaged<ServerCore>.fromOpaque(cls)._withUnsafeGuaranteedRef { core in
        completeRequest(core: core, connection: connection, requestContext: requestContext)
    }
}

/// `requestCompleted`'s work, with the core borrowed.
private func completeRequest(core: ServerCore, connection: OpaquePointer?,
                             requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
    let existing = requestContext?.pointee.map { Unmanaged<RequestContext>.fromOpaque($0) }
    if let connection {
        // The response is sent: the next request is due within the limit.
        core.watchdog.restart(connection)
        if let existing {
            existing.takeUnretainedValue().connection?.context = nil
        } else {
            (WorkerThread.Connection.of(connection) ?? WorkerThread.current.connections[connection])?.context = nil
        }
    }
    guard let requestContext, let existing else { return }
    let started = existing.takeUnretainedValue().started
    // A request cut off before its handler ran still holds its part of the budget.
    core.releaseBody(of: existing.takeUnretainedValue())
    existing.release()
    requestContext.pointee = nil
    if started { core.inFlight.wrappingSubtract(1, ordering: .releasing) }
}

/// `MHD_AcceptPolicyCallback`: refuses (closes at once) a connection accepted beyond
/// `maxConnections`. libmicrohttpd's own limit is split between the polling threads, and a
/// thread at its share stops accepting, leaving further clients in the listen backlog until it
/// times out; it is therefore set above ours (`HTTPServer.init`), and this one closes the extras.
/// Threads accepting at the same instant may each let one more in.
func acceptPolicy(cls: UnsafeMutableRawPointer?, address: UnsafePointer<sockaddr>?, length: socklen_t) -> MHD_Result {
    guard let cls else { return .YES }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    if core.openConnections.load(ordering: .relaxed) < core.maxConnections { return .YES }
    core.log("HTTPServer: connection limit (\(core.maxConnections)) reached: closing an inbound connection")
    return .NO
}

/// `MHD_NotifyConnectionCallback`: a connection opened or closed. Its socket context is its
/// `WorkerThread.Connection` (with what the watchdog keeps for it), from start to close.
func connectionNotified(cls: UnsafeMutableRawPointer?, connection: OpaquePointer?,
                        socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                        code: MHD_ConnectionNotificationCode) {
    guard let cls, let connection, let socketContext else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let watchdog = core.watchdog
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        core.openConnections.wrappingAdd(1, ordering: .relaxed)
        let record = WorkerThread.current.opened(connection, watched: watchdog.opened(connection), core: core)
        socketContext.pointee = Unmanaged.passRetained(record).toOpaque()
    case .CONNECTION_NOTIFY_CLOSED:
        core.openConnections.wrappingSubtract(1, ordering: .relaxed)
        WorkerThread.current.closed(connection, core: core)
        if let opened = socketContext.pointee {
            let record = Unmanaged<WorkerThread.Connection>.fromOpaque(opened)
            if let watched = record.takeUnretainedValue().watched { watchdog.closed(watched) }
            record.release()
            socketContext.pointee = nil
        }
    @unknown default:
        break
    }
}

/// `MHD_LogCallback`: formats libmicrohttpd's printf-style message and hands it to the core.
/// libmicrohttpd announces each error answer of its own here, just before it builds it, on the
/// connection's polling thread: the core then answers in its place (`ServerCore.answerLibraryError`).
func logMessage(cls: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVaListPointer?) {
    guard let cls, let format, let arguments else { return }
    var buffer = [CChar](repeating: 0, count: 1024)
    _ = vsnprintf(&buffer, buffer.count, format, arguments)
    var message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    while message.last == "\n" { message.removeLast() }
    if WorkerThread.current.hasDirectAnswer {
        // libmicrohttpd failing to send on the socket the server shut, and closing: expected.
        return
    }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    core.log(message)
    if let (status, page) = libraryErrorAnswer(in: message) {
        core.answerLibraryError(status: status, page: page)
    }
}

/// The status and page of libmicrohttpd 0.9.75's "Error processing request (HTTP response code
/// is %u ('%s')). Closing connection." (`transmit_error_response_len`), or nil for any other message.
func libraryErrorAnswer(in message: String) -> (status: Int, page: String)? {
    let prefix = "Error processing request (HTTP response code is "
    guard message.hasPrefix(prefix) else { return nil }
    let rest = message.dropFirst(prefix.count)
    guard let status = Int(rest.prefix { $0.isASCII && $0.isNumber }), (100...999).contains(status) else { return nil }
    return (status, String(rest))
}
