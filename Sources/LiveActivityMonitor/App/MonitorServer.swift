import Foundation
import HTTPServer
import Prometheus

/// The running server: store, metrics and HTTP daemon, wired in one place that `serve` and the
/// tests share. Stops in order: HTTP, then the writer, then the database.
public final class MonitorServer: Sendable {
    public static let version = "0.1.0"
    /// Every response carries these (DESIGN.md section 6).
    public static let securityHeaders: [(name: String, value: String)] = [
        (name: "Content-Security-Policy", value: "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"),
        (name: "X-Content-Type-Options", value: "nosniff"),
        (name: "Referrer-Policy", value: "no-referrer"),
        (name: "X-Frame-Options", value: "DENY"),
    ]

    public let configuration: MonitorConfiguration
    public let store: EventStore
    private let http: HTTPServer
    private let httpLog: LogThrottle
    let retention: Retention?
    let router: Router

    /// Opens the database, rebuilds state and starts serving.
    public init(_ configuration: MonitorConfiguration) throws {
        self.configuration = configuration
        store = try EventStore(path: configuration.databasePath, durability: configuration.durability,
                               clock: configuration.clock, catchUpInterval: configuration.catchUpInterval,
                               reservedTypes: configuration.attributesTypes + Self.templateTypes(in: configuration.webRoot),
                               maxLiveActivities: configuration.maxLiveActivities,
                               log: configuration.log)
        let httpRequests = CounterVec(name: MonitorMetrics.httpRequests.name, help: MonitorMetrics.httpRequests.help,
                                      labelNames: MonitorMetrics.httpRequests.labels)
        let registry = Registry()
        let collector = MetricsCollector(store: store, priority10Budget: configuration.priority10Budget,
                                         version: Self.version, revision: BuildInfo.revision, httpRequests: httpRequests)
        registry.register { collector.collect() }
        let process = ProcessCollector()
        registry.register { process.collect() }

        var decoder = IngestDecoder()
        decoder.maxEvents = configuration.maxEventsPerRequest
        let loopback = LoopbackHost.isLoopback(address: configuration.host)
        let ingest = IngestHandler(store: store, decoder: decoder, token: configuration.ingestToken,
                                   boundToLoopback: loopback)
        let router = Router(ingest: ingest,
                        reads: ReadHandlers(store: store, priority10Budget: configuration.priority10Budget),
                        staticFiles: StaticFiles(webRoot: configuration.webRoot),
                        registry: registry, store: store, readToken: configuration.readToken,
                        httpRequests: httpRequests, boundToLoopback: loopback)
        self.router = router
        var http = HTTPServer.Configuration()
        http.host = configuration.host
        http.port = configuration.port
        http.maxBodyBytes = configuration.maxBodyBytes
        http.maxInflightBodyBytes = configuration.maxInflightBytes
        http.maxConnections = configuration.maxConnections
        http.maxConnectionsPerIP = configuration.maxConnectionsPerAddress
        http.connectionTimeoutSeconds = configuration.connectionTimeoutSeconds
        http.defaultHeaders = Self.securityHeaders
        http.serverAnswered = { path, status in router.countServerAnswer(path: path, status: status) }
        http.checkBeforeContinue = { request in router.checkBeforeContinue(request) }
        let httpLog = LogThrottle(clock: configuration.clock, write: configuration.log)
        self.httpLog = httpLog
        http.errorLog = { httpLog($0) }
        do {
            self.http = try HTTPServer(configuration: http) { request in router.handle(request) }
        } catch {
            store.close()
            throw error
        }
        let store = store
        retention = configuration.retention.map { age in
            Retention(path: configuration.databasePath, age: age, interval: configuration.retentionInterval,
                      clock: configuration.clock, catchUp: { store.catchUp() }, log: configuration.log)
        }
        retention?.start()
    }

    /// The bound port (useful with port 0).
    public var port: Int { http.port }

    public var baseURL: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "http://\(host):\(port)"
    }

    /// Stops accepting, lets in-flight requests finish, flushes the writer, closes the database.
    public func stop() {
        http.stop()
        httpLog.flush()
        retention?.stop()
        store.close()
    }
}
