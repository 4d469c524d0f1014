import CMicroHTTPD
import Synchronization

/// The one answer a request is owed, given once from any thread by ``respond(_:)``.
///
/// Answered while the handler is still running, the response is queued as soon as it returns.
/// Otherwise the connection is suspended when the handler returns (`MHD_suspend_connection`: it
/// leaves the polling thread's set, and no thread waits for it) and resumed by `respond`
/// (`MHD_resume_connection`), after which libmicrohttpd calls the access handler once more and
/// the response is queued there, on the final call, so keep-alive is kept.
///
/// The state sits behind one lock that is also held across the suspend: an answer can never
/// reach a connection that is not suspended yet (libmicrohttpd 0.9.75 would take a resume before
/// the suspend as cancelling it, and the request would hang). An answer resumes the connection
/// just after leaving the lock, so that the polling thread it wakes does not find the lock still
/// held (it calls the access handler, `afterResume`, at once); `stop()` waits for such resumes
/// (`ServerCore.resumesUnderWay`) before it stops the daemon. A connection suspended when the
/// server stops is resumed by the server and closed unanswered (``abandon()``); a later `respond`
/// does nothing.
public final class HTTPResponder: InflightBudget {
    /// An answer: a response, or what builds it on the polling thread that sends it.
    enum Answer {
        case response(HTTPResponse)
        case builder(@Sendable () -> HTTPResponse)

        var response: HTTPResponse {
            switch self {
            case .response(let response): response
            case .builder(let build): build()
            }
        }
    }

    enum State {
        /// The handler is running and has not answered.
        case handling
        /// Answered while the handler was running: queued when it returns, without suspending.
        case answeredEarly(Answer)
        /// The connection is suspended, waiting for `respond`.
        case suspended
        /// Answered after the suspend: the connection is resumed (or about to be, by the
        /// answering thread), the response waits for the access handler's next call.
        case answered(Answer)
        /// The response has been taken for queuing.
        case done
        /// The server stopped first: the connection is resumed to be closed unanswered.
        case abandoned
    }

    /// The connection, used only while the state says it is suspended (it cannot be freed then).
    /// A bit pattern rather than a pointer: it is only ever handed back to libmicrohttpd.
    private let connection: UInt
    /// The server's core, through the handle of the polling thread that made this responder.
    private let handle: ServerCore.Handle
    private var core: ServerCore { handle.core }
    /// Bytes of the in-flight body budget the request holds, given back with its answer (its
    /// body's, and what its handler holds more: `hold`). Changed under `state`'s lock.
    private let reservedBodyBytes: Atomic<Int>
    let state = Mutex<State>(.handling)

    init(connection: OpaquePointer, core: ServerCore.Handle, reservedBodyBytes: Int) {
        self.connection = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
        self.handle = core
        self.reservedBodyBytes = Atomic(reservedBodyBytes)
    }

    /// Gives the request's body budget back (once: called where the state leaves `handling` or
    /// `suspended` for good).
    private func releaseBody() {
        let held = reservedBodyBytes.exchange(0, ordering: .relaxed)
        if held > 0 { core.inflightBodyBytes.wrappingSubtract(held, ordering: .relaxed) }
    }

    /// Holds `bytes` more of the in-flight budget (`maxInflightBodyBytes`) until the answer: what
    /// the handler made of the body and keeps meanwhile. False, holding nothing, when that would
    /// go over the budget while other requests hold some of it, or once answered.
    public func hold(_ bytes: Int) -> Bool {
        state.withLock { state in
            switch state {
            case .handling, .suspended: break
            case .answeredEarly, .answered, .done, .abandoned: return false
            }
            guard let taken = core.takeInflight(bytes, beyond: reservedBodyBytes.load(ordering: .relaxed)) else {
                return false
            }
            reservedBodyBytes.wrappingAdd(taken, ordering: .relaxed)
            return true
        }
    }

    public func holdAnswer(_ bytes: Int) -> AnswerHold? {
        core.takeInflight(bytes, beyond: 0).map { AnswerHold(core: core, bytes: $0) }
    }

    private var mhdConnection: OpaquePointer { OpaquePointer(bitPattern: connection)! }

    /// Gives the request its answer. Only the first call counts; a call after the server has
    /// stopped waiting for this request does nothing.
    public func respond(_ response: HTTPResponse) {
        answer(.response(response))
    }

    /// Gives the request its answer as a closure that builds it, run later on the polling thread
    /// that sends it: a thread that answers many requests (the store writer) spends nothing on
    /// their bodies. Only the first answer counts.
    public func respond(building build: @escaping @Sendable () -> HTTPResponse) {
        answer(.builder(build))
    }

    private func answer(_ response: Answer) {
        let resumed = state.withLock { state -> Bool in
            switch state {
            case .handling:
                state = .answeredEarly(response)
                releaseBody()
                return false
            case .suspended:
                state = .answered(response)
                releaseBody()
                // Counted under the lock, before stop() can see the state answered.
                core.resumesUnderWay.wrappingAdd(1, ordering: .relaxed)
                return true
            case .answeredEarly, .answered, .done, .abandoned:
                return false
            }
        }
        guard resumed else { return }
        core.beforeResume?()
        MHD_resume_connection(mhdConnection)
        core.resumesUnderWay.wrappingSubtract(1, ordering: .releasing)
        core.suspended.forget(self)
    }

    /// On the polling thread, when the handler has returned: the response if it answered already;
    /// otherwise the connection is suspended (or, if the server is stopping, left to close) and nil.
    func handlerReturned() -> HTTPResponse? {
        let answer = state.withLock { state -> Answer? in
            switch state {
            case .answeredEarly(let response):
                state = .done
                return response
            case .handling:
                MHD_suspend_connection(mhdConnection)
                state = .suspended
                if !core.suspended.add(self) {
                    // stop() has taken its list of suspended requests already: it will not see this one.
                    state = .abandoned
                    releaseBody()
                    MHD_resume_connection(mhdConnection)
                }
                return nil
            case .suspended, .answered, .done, .abandoned:
                return nil
            }
        }
        return answer?.response
    }

    enum Resumed {
        case answer(Answer)
        /// Close the connection unanswered.
        case abandoned
        /// Already queued (libmicrohttpd should not call again; nothing to do if it does).
        case nothing
    }

    /// On the polling thread, when libmicrohttpd calls the access handler after a resume.
    func afterResume() -> Resumed {
        state.withLock { state -> Resumed in
            switch state {
            case .answered(let response):
                state = .done
                return .answer(response)
            case .abandoned:
                return .abandoned
            case .handling, .answeredEarly, .suspended, .done:
                return .nothing
            }
        }
    }

    /// `stop()`, once the grace period is over: a connection still suspended is resumed so that
    /// libmicrohttpd can close it (it refuses to stop with suspended connections).
    func abandon() {
        state.withLock { state in
            guard case .suspended = state else { return }
            state = .abandoned
            releaseBody()
            MHD_resume_connection(mhdConnection)
        }
    }
}

/// The requests whose connections are suspended, for `stop()`: once closed, nothing more is let in.
final class SuspendedRequests: Sendable {
    private let requests = Mutex<(byID: [ObjectIdentifier: HTTPResponder], closed: Bool)>(([:], false))

    /// Registers `responder`; false once `close()` has run.
    func add(_ responder: HTTPResponder) -> Bool {
        requests.withLock { requests in
            if requests.closed { return false }
            requests.byID[ObjectIdentifier(responder)] = responder
            return true
        }
    }

    func forget(_ responder: HTTPResponder) {
        _ = requests.withLock { $0.byID.removeValue(forKey: ObjectIdentifier(responder)) }
    }

    /// Lets nothing more in; returns the requests still registered.
    func close() -> [HTTPResponder] {
        requests.withLock { requests in
            requests.closed = true
            defer { requests.byID = [:] }
            return Array(requests.byID.values)
        }
    }

    var count: Int { requests.withLock { $0.byID.count } }
}
