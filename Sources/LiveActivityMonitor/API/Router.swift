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

        switch path {
        case "/v1/events":
            guard request.method == "POST" else {
                return ("/v1/events", APIError.methodNotAllowed(allowed: "POST").response)
            }
            return ("/v1/events", ingest.handle(request))
        case "/metrics":
            return get("/metrics") {
                HTTPResponse(status: 200, headers: [(name: "Content-Type", value: TextFormat.contentType)],
                             body: Array(registry.render().utf8))
            }
        case "/-/healthy":
            return get("/-/healthy") { .text("Healthy.\n") }
        case "/-/ready":
            return get("/-/ready") { () throws(APIError) -> HTTPResponse in
                if let problem = store.readinessProblem() { throw .unavailable("not ready: " + problem) }
                return .text("Ready.\n")
            }
        case "/api/activities":
            return protected("/api/activities") { () throws(APIError) in try reads.list(request) }
        default:
            if let id = Self.parameter(path, after: "/api/activities/") {
                return protected("/api/activities/{activity_id}") { () throws(APIError) in try reads.activity(id) }
            }
            if let id = Self.parameter(path, after: "/api/bookings/") {
                return protected("/api/bookings/{booking_id}") { () throws(APIError) in try reads.booking(id) }
            }
            if path.hasPrefix("/api/") || path.hasPrefix("/v1/") {
                return protected("other") { () throws(APIError) -> HTTPResponse in throw .notFound("no route \(request.method) \(path)") }
            }
            return get("static") { () throws(APIError) -> HTTPResponse in
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
