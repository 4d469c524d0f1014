import Foundation

/// Where and how an `ActivityReporter` sends events. The defaults suit both an app (a few
/// events per activity) and a backend (one event per push).
public struct ReporterConfiguration: Sendable {
    /// The monitor's base URLs, e.g. `https://monitor.example.com`; events go to `/v1/events`.
    /// Usually one (a single monitor, or a load balancer in front of its replicas). With several
    /// (every replica's URL), the reporter sends to one at a time and fails over to the next when
    /// an attempt gets no answer or a 408, 429, 500, 502, 503 or 504, resending the same events;
    /// it stays on the URL that answered. Never empty: the initializers require one URL at least.
    public var serverURLs: [URL] {
        didSet { precondition(!serverURLs.isEmpty, "ReporterConfiguration needs at least one server URL") }
    }
    /// The first of `serverURLs`; setting it makes it the only one.
    public var serverURL: URL {
        get { serverURLs[0] }
        set { serverURLs = [newValue] }
    }
    /// The monitor's ingest token (`--ingest-token-file`), sent as `Authorization: Bearer …`.
    public var ingestToken: String?
    /// Set as `app` on every event that has none (your bundle id).
    public var app: String?
    /// Events per request, at most. The monitor takes up to 1000: a larger value sends 1000.
    public var maxBatchEvents = 100
    /// Bytes per request, at most. The monitor takes up to 1 MiB by default.
    public var maxBatchBytes = 512 * 1024
    /// How long an event may wait for others to share its request. A full batch, or `flush()`,
    /// goes at once.
    public var batchDelay: TimeInterval = 1
    /// Events kept while the monitor is unreachable; past this the oldest are dropped (counted),
    /// updates and push results before starts, ends and dismissals.
    public var maxBufferedEvents = 5_000
    /// Bytes of encoded events kept while the monitor is unreachable; past this the oldest are
    /// dropped (counted), as for `maxBufferedEvents`. One event larger than this (or than 1 MiB)
    /// is rejected (counted) when reported.
    public var maxBufferedBytes = 4 * 1024 * 1024
    /// Seconds to wait for one answer. The default transport sets it on its session (Linux
    /// ignores a request's own timeout); a transport you pass must apply it itself.
    public var requestTimeout: TimeInterval = 10
    public var retry = RetryPolicy()
    /// How long `close()` keeps retrying what is buffered (`close(within:)` takes its own
    /// deadline); what is left then is dropped and counted. An attempt under way is not cut off,
    /// so `close()` can take up to `requestTimeout` longer.
    public var closeTimeout: TimeInterval = 10
    /// Receives one line for each notable thing (a rejection, a drop, a failed attempt). Lines
    /// name events by id and type; they never contain push tokens or the ingest token.
    public var log: (@Sendable (String) -> Void)?

    public init(serverURL: URL, ingestToken: String? = nil, app: String? = nil) {
        self.init(serverURLs: [serverURL], ingestToken: ingestToken, app: app)
    }

    /// Several URLs of one monitor (its replicas), tried in this order: the first is used until
    /// an attempt on it fails. `serverURLs` must not be empty.
    public init(serverURLs: [URL], ingestToken: String? = nil, app: String? = nil) {
        precondition(!serverURLs.isEmpty, "ReporterConfiguration needs at least one server URL")
        self.serverURLs = serverURLs
        self.ingestToken = ingestToken
        self.app = app
    }

    /// `POST` target for batches sent to `serverURLs[index]`.
    func ingestURL(_ index: Int) -> URL {
        serverURLs[index].appendingPathComponent("v1").appendingPathComponent("events")
    }
}

/// Printing or dumping a configuration (as one does while debugging a setup) shows every
/// setting but the ingest token, as `PushToken` hides push tokens.
extension ReporterConfiguration: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: [
            "serverURLs": serverURLs, "ingestToken": ingestToken.map { _ in "redacted" } as Any, "app": app as Any,
            "maxBatchEvents": maxBatchEvents, "maxBatchBytes": maxBatchBytes, "batchDelay": batchDelay,
            "maxBufferedEvents": maxBufferedEvents, "maxBufferedBytes": maxBufferedBytes,
            "requestTimeout": requestTimeout, "retry": retry, "log": log as Any,
        ], displayStyle: .struct)
    }
}
