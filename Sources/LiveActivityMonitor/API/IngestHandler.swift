import HTTPServer
import JSON

/// `POST /v1/events` (DESIGN.md section 3): authenticate, decode, validate, store durably, answer.
struct IngestHandler: Sendable {
    let store: any MonitorStore
    let decoder: IngestDecoder
    let token: String?
    /// Bound to a loopback address: with no token, only requests for loopback names (`LoopbackHost`).
    let boundToLoopback: Bool
    let decoding = ConcurrencyLimit.decoding()

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        switch ingest(request) {
        case .success(let summary):
            return .json { w in
                w.beginObject()
                w.key("accepted"); w.number(Int64(summary.accepted))
                w.key("duplicates"); w.number(Int64(summary.duplicates))
                // Only when there are any: answers of earlier versions had no such member.
                if summary.conflicts > 0 { w.key("conflicts"); w.number(Int64(summary.conflicts)) }
                w.endObject()
            }
        case .failure(let error):
            store.countRejection(Self.rejection(for: error))
            return error.response
        }
    }

    /// What the request is refused for from its headers alone (credentials, host, content type),
    /// or nil: also asked before a body is read, when the client waits for `100 Continue`.
    func refusal(_ request: HTTPRequest) -> APIError? {
        guard BearerToken.allows(request, token: token) else { return .unauthorized }
        if token == nil, boundToLoopback, !LoopbackHost.isAddressed(request) {
            return LoopbackHost.refusal(route: "/v1/events", tokenOption: "--ingest-token-file")
        }
        guard IngestDecoder.format(contentType: request.header("content-type")) != nil else {
            return Self.unsupportedContentType(request)
        }
        return nil
    }

    static func unsupportedContentType(_ request: HTTPRequest) -> APIError {
        .unsupportedMediaType(
            "Content-Type must be application/json or application/x-ndjson, not \(request.header("content-type") ?? "missing")")
    }

    /// Refuses a request that waits for `100 Continue` if its headers alone decide it (the
    /// refusal is counted as any other); nil lets the client send its body.
    func checkBeforeBody(_ request: HTTPRequest) -> HTTPResponse? {
        guard let error = refusal(request) else { return nil }
        store.countRejection(Self.rejection(for: error))
        return error.response
    }

    private func ingest(_ request: HTTPRequest) -> Result<IngestSummary, APIError> {
        if let error = refusal(request) { return .failure(error) }
        guard let format = IngestDecoder.format(contentType: request.header("content-type")) else {
            return .failure(Self.unsupportedContentType(request))
        }
        let events: [Event]
        do {
            events = try decoding.run { () throws(APIError) in try decoder.decode(request.body, format: format) }
        } catch {
            return .failure(error)
        }
        return store.ingest(events)
    }

    static func rejection(for error: APIError) -> MonitorMetrics.Rejection {
        switch error {
        case .unauthorized, .forbidden: .unauthorized
        case .unsupportedMediaType: .unsupportedMediaType
        case .payloadTooLarge: .tooLarge
        case .invalidEvents: .invalid
        case .unavailable: .unavailable
        default: .malformed
        }
    }
}

/// `Authorization: Bearer <token>` checks, in constant time.
enum BearerToken {
    static func allows(_ request: HTTPRequest, token: String?) -> Bool {
        guard let token else { return true }
        guard let header = request.header("authorization") else { return false }
        let prefix = "Bearer "
        guard header.count > prefix.count, header.prefix(prefix.count).lowercased() == prefix.lowercased() else { return false }
        return ConstantTime.equals(String(header.dropFirst(prefix.count)), token)
    }
}
