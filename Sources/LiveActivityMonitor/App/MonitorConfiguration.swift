import HTTPServer
/// Everything `serve` needs, as one value (no globals): see `live-activity-monitor serve --help`.
public struct MonitorConfiguration: Sendable {
    public static let defaultPort = 9464

    public var host = "127.0.0.1"
    public var port = MonitorConfiguration.defaultPort
    public var databasePath = "live-activities.sqlite"
    public var webRoot = "Web"
    /// Bearer token required on `POST /v1/events`; nil = open.
    public var ingestToken: String?
    /// Bearer token required on `/api/*`; nil = open.
    public var readToken: String?
    public var durability = Durability.normal
    /// Events older than this many seconds are deleted automatically (`--retention`); nil = keep all.
    public var retention: Double?
    /// Seconds between automatic retention passes.
    public var retentionInterval = 3600.0
    public var maxBodyBytes = 1 << 20
    /// Live activities kept in memory (`--max-live-activities`); the oldest-started beyond it
    /// leave memory, still stored.
    public var maxLiveActivities = EventStore.defaultMaxLiveActivities
    /// Request-body bytes held at once by all requests (`--max-inflight-bytes`); beyond it, 503.
    public var maxInflightBytes = 64 << 20
    public var maxEventsPerRequest = 1000
    /// Connections open at once (`--max-connections`): an idle one holds a socket and its
    /// buffers, no thread.
    public var maxConnections = 8192
    /// libmicrohttpd polling threads (`--http-threads`); one per processor by default.
    public var httpThreads = HTTPServer.Configuration.processorCount
    /// Connections one client address may hold at once; 0 = no per-address limit.
    public var maxConnectionsPerAddress = 0
    public var connectionTimeoutSeconds = 30
    /// Attributes types that always have their own `attributes_type` series (`--attributes-types`),
    /// besides those with a template in the web root.
    public var attributesTypes: [String] = []
    /// Priority-10 pushes per activity per hour above which it counts as heavy (kept in
    /// `engine`, which the store takes: it keeps the heavy gauge).
    public var priority10Budget: Int {
        get { engine.priority10Budget }
        set { engine.priority10Budget = newValue }
    }
    /// `--delivery-grace`, `--start-window`, `--priority10-budget` (DESIGN.md section 4).
    public var engine = EngineSettings()
    public var demo = false
    public var demoRate = 20.0
    public var clock = Clock.system
    /// How long the current-state and counters tables may stay behind memory (tests stretch it).
    var catchUpInterval = EventStore.defaultCatchUpInterval
    /// Where the server's own diagnostics go (libmicrohttpd's, the HTTP layer's, retention's);
    /// `serve` writes them to standard error. The HTTP layer's are throttled (`LogThrottle`).
    public var log: @Sendable (String) -> Void = { _ in }

    public init() {}
}
