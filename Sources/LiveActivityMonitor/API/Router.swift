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
    let store: EventStore
    let readToken: String?
    let httpRequests: CounterVec

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let (handler, response) = route(request)
        httpRequests.inc([String(response.status), handler])
        return response
    }

    /// Counts an answer the HTTP layer gave without calling `handle`: a body over the size cap
    /// (413) is a refused ingest like one with too many events.
    func countServerAnswer(path: String, status: Int) {
        let template = Self.template(for: path)
        httpRequests.inc([String(status), template])
        if template == "/v1/events", status == 413 { store.countRejection(.tooLarge) }
    }

    /// The route template a path is counted under (never the raw path: ids would make series).
    static func template(for path: String) -> String {
        switch path {
        case "/v1/events", "/metrics", "/-/healthy", "/-/ready", "/api/activities":
            return path
        default:
            if parameter(path, after: "/api/activities/") != nil { return "/api/activities/{activity_id}" }
            if parameter(path, after: "/api/bookings/") != nil { return "/api/bookings/{booking_id}" }
            if path.hasPrefix("/api/") || path.hasPrefix("/v1/") { return "other" }
            return "static"
        }
    }

    private func route(_ request: HTTPRequest) -> (String, HTTPResponse) {
        let path = request.path
        let isGet = request.method == "GET" || request.method == "HEAD"
        func get(_ template: String, _ body: () throws(APIError) -> HTTPResponse) -> (String, HTTPResponse) {
            guard isGet else { return (template, APIError.methodNotAllowed(allowed: "GET").response) }
            do { return (template, try body()) } catch { return (template, error.response) }
        }
        func protected(_ template: String, _ body: () throws(APIError) -> HTTPResponse) -> (String, HTTPResponse) {
            get(template) { () throws(APIError) -> HTTPResponse in
                guard BearerToken.allows(request, token: readToken) else { throw .unauthorized }
                return try body()
            }
        }

        let template = Self.template(for: path)
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
            return protected(template) { () throws(APIError) in try reads.list(request) }
        case "/api/activities/{activity_id}":
            let id = Self.parameter(path, after: "/api/activities/") ?? ""
            return protected(template) { () throws(APIError) in try reads.activity(id) }
        case "/api/bookings/{booking_id}":
            let id = Self.parameter(path, after: "/api/bookings/") ?? ""
            return protected(template) { () throws(APIError) in try reads.booking(id) }
        case "other":
            return protected(template) { () throws(APIError) -> HTTPResponse in throw .notFound("no route \(request.method) \(path)") }
        default:
            return get(template) { () throws(APIError) -> HTTPResponse in
                guard let response = staticFiles.serve(path) else { throw .notFound("not found") }
                return response
            }
        }
    }

    /// The one path segment after `prefix`, if that is all there is.
    static func parameter(_ path: String, after prefix: String) -> String? {
        guard path.hasPrefix(prefix) else { return nil }
        let rest = String(path.dropFirst(prefix.count))
        return rest.isEmpty || rest.contains("/") ? nil : rest
    }
}

extension HTTPResponse {
    static func text(_ s: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")], body: Array(s.utf8))
    }
}
