import HTTPServer
import Prometheus

/// Everything that answers requests, built over one store and bound to no socket: what
/// `buildMonitor` returns. `MonitorServer` hands `router` to the HTTP server; the in-process
/// tests call `handle` with built requests.
struct Monitor<Store: MonitorStore>: Sendable {
    /// The store the handlers and the scrape use; its owner closes it (`MonitorServer.stop`).
    let store: Store
    /// Every family `/metrics` renders: the store's, the HTTP answers', the process's.
    let registry: Registry
    let router: Router

    /// Answers one request as the HTTP server would have the router answer it (the server adds
    /// its default headers, the security headers, and `Content-Length`).
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        router.handle(request)
    }
}
