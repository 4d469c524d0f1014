import HTTPServer
import Prometheus

/// What a replica that does not lead answers (DESIGN.md sections 6 and 9): a standby, or a
/// leader that lost its lock and is stopping. It holds no state. One activity and one booking
/// (`/api/activities/{id}`, `/api/bookings/{id}`, with `?at=` and the files) are read from the
/// tables (`reads`: the monitor's router over `PostgresStandbyStore`, tokens checked as on the
/// leader). Ingest, lists, triage, channels and the dashboard get 503 with `Retry-After: 1` (a
/// client, a load balancer or the reporter tries again, or another replica); `/-/ready` is 503
/// too, so that a load balancer sends everything to the leader; `/-/healthy` is 200 (the
/// process is fine); `/metrics` has only what every replica exports (`liveactivity_leader` 0,
/// build and process), never a domain metric, so that sums over replicas stay right.
struct StandbyAnswers: Sendable {
    let registry: Registry
    let reads: Router?

    /// The routes a standby reads from the tables, through `reads`.
    static let readRoutes: Set<String> = ["/api/activities/{activity_id}", "/api/bookings/{booking_id}"]

    init(version: String, revision: String, reads: Router? = nil) {
        registry = Registry()
        registry.register { MetricsCollector.replicaFamilies(leader: false, version: version, revision: revision) }
        let process = ProcessCollector()
        registry.register { process.collect() }
        self.reads = reads
    }

    /// Answers `request` as `Router.handle(_:answer:)` does (`deposed`: this replica led and
    /// lost the lock).
    func handle(_ request: HTTPRequest, deposed: Bool,
                answer: @escaping @Sendable (@escaping @Sendable () -> HTTPResponse) -> Void) {
        if let reads, Self.readRoutes.contains(Router.match(request.pathSegments, path: request.path).template) {
            return reads.handle(request, answer: answer)
        }
        let response = self.answer(request, deposed: deposed)
        answer { response }
    }

    /// The answer to `request`; `deposed` when this replica led and lost the lock.
    func answer(_ request: HTTPRequest, deposed: Bool) -> HTTPResponse {
        let isGet = request.method == "GET" || request.method == "HEAD"
        let template = Router.match(request.pathSegments, path: request.path).template
        if template == "/v1/events" {
            guard request.method == "POST" else { return APIError.methodNotAllowed(allowed: "POST").response }
            return refusal(deposed)
        }
        guard isGet else { return APIError.methodNotAllowed(allowed: "GET").response }
        switch template {
        case "/metrics":
            return HTTPResponse(status: 200, headers: [(name: "Content-Type", value: TextFormat.contentType)],
                                body: Array(registry.render().utf8))
        case "/-/healthy":
            return .text("Healthy.\n")
        case "/-/ready":
            var response = HTTPResponse.text("not ready: \(why(deposed))\n", status: 503)
            response.headers.append((name: "Retry-After", value: "1"))
            return response
        default:
            return refusal(deposed)
        }
    }

    /// Answers an ingest before its body is sent (no `100 Continue`): the body is not wanted.
    func checkBeforeContinue(_ request: HTTPRequest, deposed: Bool) -> HTTPResponse? {
        let template = Router.match(request.pathSegments, path: request.path).template
        return template == "/v1/events" ? answer(request, deposed: deposed) : nil
    }

    private func refusal(_ deposed: Bool) -> HTTPResponse {
        var response = APIError.unavailable(why(deposed) + "; nothing from this request was stored").response
        response.headers.removeAll { $0.name == "Retry-After" }
        response.headers.append((name: "Retry-After", value: "1"))
        return response
    }

    private func why(_ deposed: Bool) -> String {
        deposed ? "this replica lost the leader lock and is stopping; another replica takes over"
            : "this replica is a standby: another one leads (events, lists and the dashboard go there)"
    }
}
