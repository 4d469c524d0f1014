import Dispatch
import Foundation
import Glibc
import HTTPServer
import JSON
import Prometheus

/// Maps requests to handlers, checks methods and the read token, and counts every answer by
/// route template (never by raw path).
struct Router: Sendable {
    let ingest: IngestHandler
    let reads: ReadHandlers
    let staticFiles: StaticFiles
    let registry: Registry
    let store: any MonitorStore
    let readToken: String?
    let httpRequests: CounterVec
    /// Bound to a loopback address: with no read token, `/api/*` answers only requests for
    /// loopback names (`LoopbackHost`).
    let boundToLoopback: Bool

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        handle(request, listsBusy: false)
    }

    /// `listsBusy`: no list thread was free in time for this list (`listThreads`): it is refused.
    private func handle(_ request: HTTPRequest, listsBusy: Bool) -> HTTPResponse {
        var (handler, response) = route(request, listsBusy: listsBusy)
        if handler.hasPrefix("/api/") { response = Self.held(response, for: request) }
        httpRequests.inc([String(response.status), handler])
        return response
    }

    /// Answers from this size on hold their size of the in-flight budget (`--max-inflight-bytes`)
    /// until libmicrohttpd has sent them (a booking's file, a page of thousands of events).
    static let heldAnswerBytes = 256 << 10

    /// `response`, holding the budget if it is large: libmicrohttpd keeps an answer until its
    /// client has read it, so clients that ask for large answers and read none would otherwise
    /// keep them all in memory for as long as their connections last. Over the budget: 503.
    static func held(_ response: HTTPResponse, for request: HTTPRequest) -> HTTPResponse {
        guard response.body.count >= heldAnswerBytes, let budget = request.inflightBudget else { return response }
        guard let hold = budget.holdAnswer(response.body.count) else {
            return APIError.overBudget("too many large answers waiting for their clients to read them: retry shortly").response
        }
        var held = response
        held.answerHold = hold
        return held
    }

    /// What the HTTP server calls, on a polling thread that must never wait: an ingest is
    /// answered once its events are durable, from the store writer (the request's connection
    /// suspended meanwhile); the reads that may wait or take long (`/-/ready` probes a failing
    /// store with a write; a history read replays and may queue for a slot; triage walks the live
    /// activities) run on `slowReads`; a list or
    /// search on one of the `listThreads`, at a lower priority; every other route is answered at
    /// once, where it arrived.
    ///
    /// `answer` takes what builds the response, run where it is sent (for an ingest, on the
    /// polling thread after the resume, not on the writer).
    func handle(_ request: HTTPRequest, answer: @escaping @Sendable (@escaping @Sendable () -> HTTPResponse) -> Void) {
        switch Self.match(request.pathSegments, path: request.path).template {
        case "/v1/events" where request.method == "POST":
            let httpRequests = httpRequests
            ingest.handle(request) { build in
                answer {
                    let response = build()
                    httpRequests.inc([String(response.status), "/v1/events"])
                    return response
                }
            }
        case "/api/activities":
            Self.listThreads.run { inTime in
                let response = handle(request, listsBusy: !inTime)
                // Answered at normal priority: answering takes the request's lock, which the
                // polling thread needs when the connection resumes, and a niced thread preempted
                // while it holds it would keep that thread (and its other connections) waiting.
                Self.listAnswers.async { answer { response } }
            }
        case "/-/ready", "/api/activities/{activity_id}", "/api/bookings/{booking_id}", "/api/channels/{channel_id}",
             "/api/triage":
            Self.slowReads.async {
                let response = handle(request)
                answer { response }
            }
        default:
            let response = handle(request)
            answer { response }
        }
    }

    /// Where lists and searches (`GET /api/activities`) run: threads at the lowest CPU priority
    /// (nice 19), so that on busy processors they get what the writer, ingest and scrapes leave;
    /// half as many as processors (at least one), so that lists never take every processor. A
    /// list that finds no thread free within 5 s is answered 503 with Retry-After.
    static let listThreads = NicedThreads(named: "list-read", count: ProcessInfo.processInfo.activeProcessorCount / 2,
                                          nice: 19, maxWait: 5)

    /// Where the list threads' answers are handed to the HTTP layer, at normal priority.
    static let listAnswers = DispatchQueue(label: "list-answers")

    /// Where reads that may wait run, off the HTTP polling threads.
    static let slowReads = DispatchQueue(label: "slow-reads", qos: .userInitiated, attributes: .concurrent)

    /// Counts an answer the HTTP layer gave without calling `handle`: a body over the size cap
    /// (413) is a refused ingest like one with too many events; so is a content coding (415),
    /// and any other refusal of the request's framing or head (malformed).
    func countServerAnswer(path: String, status: Int) {
        let template = Self.match(HTTPRequest.pathSegments(of: path), path: path).template
        httpRequests.inc([String(status), template])
        guard template == "/v1/events", status >= 400 else { return }
        switch status {
        case 413: store.countRejection(.tooLarge)
        case 415: store.countRejection(.unsupportedMediaType)
        case 503: store.countRejection(.unavailable)
        default: store.countRejection(.malformed)
        }
    }

    /// Answers now, before the body is read and without `100 Continue`, a request that asks for
    /// it and that `handle` would refuse from its headers alone: the wrong method, or for ingest
    /// missing credentials, another host or a content type it does not take. Counted as
    /// `handle` counts; nil lets the client send the body.
    func checkBeforeContinue(_ request: HTTPRequest) -> HTTPResponse? {
        let (template, _) = Self.match(request.pathSegments, path: request.path)
        let response: HTTPResponse?
        switch template {
        case "/v1/events":
            response = request.method == "POST" ? ingest.checkBeforeBody(request)
                : APIError.methodNotAllowed(allowed: "POST").response
        default:
            response = request.method == "GET" || request.method == "HEAD" ? nil
                : APIError.methodNotAllowed(allowed: "GET").response
        }
        if let response { httpRequests.inc([String(response.status), template]) }
        return response
    }

    /// The route template a request is counted under (never the raw path: ids would make
    /// series), and the id the path names, if any. `segments` are the path's, split before they
    /// are decoded, so that an id may hold any character, "/" included.
    static func match(_ segments: [String]?, path: String) -> (template: String, id: String?) {
        guard let segments else {
            // Not valid percent-encoded UTF-8 (or not starting with "/"): it names nothing,
            // and is answered 404 by whichever branch it falls in.
            return (path.hasPrefix("/api/") || path.hasPrefix("/v1/") ? "other" : "static", nil)
        }
        switch segments.count {
        case 1 where segments[0] == "metrics":
            return ("/metrics", nil)
        case 2 where segments == ["v1", "events"] || segments == ["-", "healthy"] || segments == ["-", "ready"]
                     || segments == ["api", "activities"] || segments == ["api", "shapes"] || segments == ["api", "triage"]
                     || segments == ["api", "channels"]:
            return ("/" + segments.joined(separator: "/"), nil)
        case 3 where segments[0] == "api" && segments[1] == "activities" && !segments[2].isEmpty:
            return ("/api/activities/{activity_id}", segments[2])
        case 3 where segments[0] == "api" && segments[1] == "bookings" && !segments[2].isEmpty:
            return ("/api/bookings/{booking_id}", segments[2])
        case 3 where segments[0] == "api" && segments[1] == "channels" && !segments[2].isEmpty:
            return ("/api/channels/{channel_id}", segments[2])
        default:
            return (segments.count > 1 && (segments[0] == "api" || segments[0] == "v1") ? "other" : "static", nil)
        }
    }

    private func route(_ request: HTTPRequest, listsBusy: Bool) -> (String, HTTPResponse) {
        let path = request.path
        let isGet = request.method == "GET" || request.method == "HEAD"
        func get(_ template: String, _ body: () throws(APIError) -> HTTPResponse) -> (String, HTTPResponse) {
            guard isGet else { return (template, APIError.methodNotAllowed(allowed: "GET").response) }
            do { return (template, try body()) } catch { return (template, error.response) }
        }
        func protected(_ template: String, _ body: () throws(APIError) -> HTTPResponse) -> (String, HTTPResponse) {
            var (template, response) = get(template) { () throws(APIError) -> HTTPResponse in
                guard BearerToken.allows(request, token: readToken) else { throw .unauthorized }
                if readToken == nil, boundToLoopback, !LoopbackHost.isAddressed(request) {
                    throw LoopbackHost.refusal(route: "/api/*", tokenOption: "--read-token-file")
                }
                return try body()
            }
            // Bookings, ids and what happened to them: no browser or proxy keeps a copy.
            response.headers.append((name: "Cache-Control", value: "no-store"))
            return (template, response)
        }

        let segments = request.pathSegments
        let (template, id) = Self.match(segments, path: path)
        switch template {
        case "/v1/events":
            guard request.method == "POST" else {
                return (template, APIError.methodNotAllowed(allowed: "POST").response)
            }
            return (template, ingest.handle(request))
        case "/metrics":
            return get(template) {
                HTTPResponse(status: 200, headers: [(name: "Content-Type", value: TextFormat.contentType)],
                             body: Array(registry.render().utf8))
            }
        case "/-/healthy":
            return get(template) { .text("Healthy.\n") }
        case "/-/ready":
            return get(template) { () throws(APIError) -> HTTPResponse in
                if let problem = store.readinessProblem() { throw .unavailable("not ready: " + problem) }
                return .text("Ready.\n")
            }
        case "/api/activities":
            return protected(template) { () throws(APIError) in try reads.list(request, busy: listsBusy) }
        case "/api/shapes":
            return protected(template) { reads.shapes() }
        case "/api/triage":
            return protected(template) { () throws(APIError) in try reads.triage(request) }
        case "/api/channels":
            return protected(template) { () throws(APIError) in try reads.channels(request) }
        case "/api/channels/{channel_id}":
            return protected(template) { () throws(APIError) in try reads.channel(id ?? "") }
        case "/api/activities/{activity_id}":
            return protected(template) { () throws(APIError) in try reads.activity(id ?? "", query: request.query) }
        case "/api/bookings/{booking_id}":
            return protected(template) { () throws(APIError) in try reads.booking(id ?? "", query: request.query) }
        case "other":
            return protected(template) { () throws(APIError) -> HTTPResponse in
                guard segments != nil else { throw .notFound("path is not valid percent-encoded UTF-8: \(path)") }
                throw .notFound("no route \(request.method) \(path)")
            }
        default:
            return get(template) { () throws(APIError) -> HTTPResponse in
                guard let segments, let response = staticFiles.serve(segments) else { throw .notFound("not found") }
                return response
            }
        }
    }
}

extension HTTPResponse {
    static func text(_ s: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")], body: Array(s.utf8))
    }
}
