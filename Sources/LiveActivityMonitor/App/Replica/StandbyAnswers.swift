import HTTPServer
import Prometheus

/// What a replica that does not lead answers (DESIGN.md sections 6 and 9): a standby, or a
/// leader that lost its lock and is stopping. The read API and the dashboard go to `reads`, the
/// monitor's router over `PostgresStandbyStore` (read-only, tokens checked as on the leader):
/// one activity and one booking (`/api/activities/{id}`, `/api/bookings/{id}`, with `?at=` and
/// the files) from the tables at any time; the routes that read the live state (the lists and
/// search, triage, channels, shapes) from the store's snapshot, and 503 with `Retry-After: 1`
/// while there is none (before its first load; a leader that lost its lock dropped it).
/// Ingest gets 503 with `Retry-After: 1` (a client, a load balancer or the reporter tries
/// again, or another replica); `/-/ready` is 503 too, so that a load balancer sends everything
/// to the leader; `/-/healthy` is 200 (the process is fine); `/metrics` has only what every
/// replica exports (`liveactivity_leader` 0, build and process), never a domain metric, so that
/// sums over replicas stay right.
struct StandbyAnswers: Sendable {
    let registry: Registry
    let reads: Router?
    /// Whether the live state's snapshot is in (`PostgresStandbyStore.hasSnapshot`).
    let hasSnapshot: @Sendable () -> Bool

    /// The routes answered here, never by `reads`.
    static let ownRoutes: Set<String> = ["/v1/events", "/metrics", "/-/healthy", "/-/ready"]
    /// The routes `reads` answers from the snapshot of the live state.
    static let snapshotRoutes: Set<String> = ["/api/activities", "/api/triage", "/api/channels", "/api/shapes",
                                              "/api/channels/{channel_id}"]

    init(version: String, revision: String, reads: Router? = nil, hasSnapshot: @escaping @Sendable () -> Bool = { false }) {
        registry = Registry()
        registry.register { MetricsCollector.replicaFamilies(leader: false, version: version, revision: revision) }
        let process = ProcessCollector()
        registry.register { process.collect() }
        self.reads = reads
        self.hasSnapshot = hasSnapshot
    }

    /// Answers `request` as `Router.handle(_:answer:)` does (`deposed`: this replica led and
    /// lost the lock).
    func handle(_ request: HTTPRequest, deposed: Bool,
                answer: @escaping @Sendable (@escaping @Sendable () -> HTTPResponse) -> Void) {
        let template = Router.match(request.pathSegments, path: request.path).template
        if let reads, !Self.ownRoutes.contains(template), !Self.snapshotRoutes.contains(template) || hasSnapshot() {
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
            return refusal(why(deposed) + "; nothing from this request was stored")
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
            return refusal(deposed ? why(deposed)
                           : "this replica is a standby and has not read the state from the database yet; the leader answers this")
        }
    }

    /// Answers an ingest before its body is sent (no `100 Continue`): the body is not wanted.
    func checkBeforeContinue(_ request: HTTPRequest, deposed: Bool) -> HTTPResponse? {
        let template = Router.match(request.pathSegments, path: request.path).template
        return template == "/v1/events" ? answer(request, deposed: deposed) : nil
    }

    private func refusal(_ message: String) -> HTTPResponse {
        var response = APIError.unavailable(message).response
        response.headers.removeAll { $0.name == "Retry-After" }
        response.headers.append((name: "Retry-After", value: "1"))
        return response
    }

    private func why(_ deposed: Bool) -> String {
        deposed ? "this replica lost the leader lock and is stopping; another replica takes over"
            : "this replica is a standby: another one leads (events go there)"
    }
}
