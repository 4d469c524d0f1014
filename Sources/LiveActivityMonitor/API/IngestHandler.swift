import Dispatch
import Foundation
import HTTPServer
import JSON
import Synchronization

/// `POST /v1/events` (DESIGN.md section 3): authenticate, decode, validate, store durably, answer.
struct IngestHandler: Sendable {
    let store: any MonitorStore
    let decoder: IngestDecoder
    let token: String?
    /// Bound to a loopback address: with no token, only requests for loopback names (`LoopbackHost`).
    let boundToLoopback: Bool

    /// Bodies up to this size are decoded where they arrive, on the HTTP polling thread (one
    /// event takes microseconds); larger ones on `decodingQueues`, so that a flood of large
    /// batches never holds the polling threads.
    static let inlineDecodeBytes = 16 << 10

    /// Where large bodies are decoded: one serial queue per processor but one, which leaves a
    /// processor to the store writer that every request waits for, taken in turn.
    static let decodingQueues: [DispatchQueue] = (0..<max(1, ProcessInfo.processInfo.activeProcessorCount - 1)).map {
        DispatchQueue(label: "ingest-decode-\($0)", qos: .userInitiated)
    }
    private static let nextQueue = Atomic(0)

    /// Answers through `answer` with what builds the response (run where it is sent), from
    /// whichever thread finishes the request: at once when it is refused, otherwise from the
    /// store writer once the events are durable (or from a decoding queue, refused). The writer
    /// only hands the outcome on: the response is built on the polling thread that sends it.
    func handle(_ request: HTTPRequest, answer: @escaping @Sendable (@escaping @Sendable () -> HTTPResponse) -> Void) {
        let format: IngestDecoder.Format
        switch admission(request) {
        case .success(let taken): format = taken
        case .failure(let error):
            let response = refused(error)
            return answer { response }
        }
        let work: @Sendable () -> Void = { [self] in
            let events: [Event]
            do throws(APIError) {
                events = try decoder.decode(request.body, format: format)
            } catch {
                let response = refused(error)
                return answer { response }
            }
            // The parsed contents wait with their events until stored: they hold the in-flight
            // budget as the body does (`--max-inflight-bytes`), which counts only its bytes.
            guard request.holdInflight(Self.readingBytes(events)) else {
                let response = refused(.overBudget("too many request bodies in flight: retry shortly"))
                return answer { response }
            }
            store.ingest(events) { result in
                switch result {
                case .success(let summary): answer { Self.accepted(summary) }
                case .failure(let error): answer { refused(error) }
                }
            }
        }
        if request.body.count <= Self.inlineDecodeBytes {
            work()
        } else {
            let queues = Self.decodingQueues
            queues[Self.nextQueue.wrappingAdd(1, ordering: .relaxed).oldValue % queues.count].async(execute: work)
        }
    }

    /// The same, waiting for the answer (in-process callers and tests).
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let response = Mutex<HTTPResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        handle(request) { build in
            response.withLock { $0 = build() }
            done.signal()
        }
        done.wait()
        return response.withLock { $0! }
    }

    /// The heap the events' parsed contents hold (`ContentReading.heapBytes`).
    static func readingBytes(_ events: [Event]) -> Int {
        events.reduce(0) { $0 + ($1.contentReading?.heapBytes ?? 0) }
    }

    static func accepted(_ summary: IngestSummary) -> HTTPResponse {
        summary == IngestSummary(accepted: 1) ? acceptedOne : answer(accepting: summary)
    }

    /// The answer to one new event, nearly every single-event request's: made once, not per request.
    private static let acceptedOne = answer(accepting: IngestSummary(accepted: 1))

    private static func answer(accepting summary: IngestSummary) -> HTTPResponse {
        .json { w in
            w.beginObject()
            w.key("accepted"); w.number(Int64(summary.accepted))
            w.key("duplicates"); w.number(Int64(summary.duplicates))
            // Only when there are any: answers of earlier versions had no such member.
            if summary.conflicts > 0 { w.key("conflicts"); w.number(Int64(summary.conflicts)) }
            w.endObject()
        }
    }

    /// The answer to a refused request, counted.
    private func refused(_ error: APIError) -> HTTPResponse {
        store.countRejection(Self.rejection(for: error))
        return error.response
    }

    /// What the request is refused for from its headers alone (credentials, host, content type),
    /// or nil: also asked before a body is read, when the client waits for `100 Continue`.
    func refusal(_ request: HTTPRequest) -> APIError? {
        if case .failure(let error) = admission(request) { error } else { nil }
    }

    /// What the headers alone decide: the body's format, or why the request is refused.
    private func admission(_ request: HTTPRequest) -> Result<IngestDecoder.Format, APIError> {
        guard BearerToken.allows(request, token: token) else { return .failure(.unauthorized) }
        if token == nil, boundToLoopback, !LoopbackHost.isAddressed(request) {
            return .failure(LoopbackHost.refusal(route: "/v1/events", tokenOption: "--ingest-token-file"))
        }
        guard let format = IngestDecoder.format(contentType: request.header("content-type")) else {
            return .failure(Self.unsupportedContentType(request))
        }
        return .success(format)
    }

    static func unsupportedContentType(_ request: HTTPRequest) -> APIError {
        let given = request.header("content-type").flatMap { $0.isEmpty ? nil : $0 }
        return .unsupportedMediaType("Content-Type must be application/json or application/x-ndjson, in UTF-8"
                                     + (given.map { ", not \($0)" } ?? ": the request has none"))
    }

    /// Refuses a request that waits for `100 Continue` if its headers alone decide it (the
    /// refusal is counted as any other); nil lets the client send its body.
    func checkBeforeBody(_ request: HTTPRequest) -> HTTPResponse? {
        guard let error = refusal(request) else { return nil }
        store.countRejection(Self.rejection(for: error))
        return error.response
    }

    static func rejection(for error: APIError) -> MonitorMetrics.Rejection {
        switch error {
        case .unauthorized, .forbidden: .unauthorized
        case .unsupportedMediaType: .unsupportedMediaType
        case .payloadTooLarge: .tooLarge
        case .invalidEvents: .invalid
        case .unavailable, .overBudget: .unavailable
        default: .malformed
        }
    }
}

/// `Authorization: Bearer <token>` checks, in constant time.
enum BearerToken {
    static func allows(_ request: HTTPRequest, token: String?) -> Bool {
        guard let token else { return true }
        guard let header = request.header("authorization") else { return false }
        // RFC 6750 section 2.1: the scheme in any case, then one or more spaces.
        let scheme = "bearer"
        guard header.prefix(scheme.count).lowercased() == scheme, header.dropFirst(scheme.count).first == " " else { return false }
        let credentials = header.dropFirst(scheme.count).drop { $0 == " " }
        return !credentials.isEmpty && ConstantTime.equals(String(credentials), token)
    }
}
