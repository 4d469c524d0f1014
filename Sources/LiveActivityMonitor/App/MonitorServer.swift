import Foundation
import HTTPServer
import Prometheus

/// The running server: the monitor (`buildMonitor`: store, metrics, handlers) bound to an HTTP
/// daemon, plus retention. `serve` and the live tests run it. Stops in order: HTTP, then
/// retention, then the writer and the database.
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
    private let backing: StoreBacking
    private let http: HTTPServer
    private let httpLog: LogThrottle
    let retention: Retention?
    let postgresRetention: PostgresRetention?

    /// The SQLite store. Only a server on an SQLite file has one (`--db FILE`, the live tests'
    /// servers): over PostgreSQL this is a programming error.
    public var store: EventStore {
        guard case .sqlite(let monitor) = backing else { preconditionFailure("this server's store is PostgreSQL, not SQLite") }
        return monitor.store
    }

    /// Opens the database (an SQLite file, or PostgreSQL for a `postgres://` URI, with
    /// `databasePassword` when given), rebuilds state (`buildMonitor`), then binds the socket and
    /// starts serving (and retention, when configured).
    public init(_ configuration: MonitorConfiguration, databasePassword: String? = nil) throws {
        self.configuration = configuration
        let backing: StoreBacking = PostgresStoreDatabase.isPostgresURI(configuration.databasePath)
            ? .postgres(try buildPostgresMonitor(configuration, password: databasePassword))
            : .sqlite(try buildMonitor(configuration))
        self.backing = backing
        let router = backing.router
        var http = HTTPServer.Configuration()
        http.host = configuration.host
        http.port = configuration.port
        http.maxBodyBytes = configuration.maxBodyBytes
        http.maxInflightBodyBytes = configuration.maxInflightBytes
        http.maxConnections = configuration.maxConnections
        http.maxConnectionsPerIP = configuration.maxConnectionsPerAddress
        http.threadPoolSize = configuration.httpThreads
        http.connectionTimeoutSeconds = configuration.connectionTimeoutSeconds
        http.defaultHeaders = Self.securityHeaders
        http.serverAnswered = { path, status in router.countServerAnswer(path: path, status: status) }
        http.checkBeforeContinue = { request in router.checkBeforeContinue(request) }
        let httpLog = LogThrottle(clock: configuration.clock, write: configuration.log)
        self.httpLog = httpLog
        http.errorLog = { httpLog($0) }
        do {
            self.http = try HTTPServer(configuration: http, answering: { request, responder in
                router.handle(request) { responder.respond(building: $0) }
            })
        } catch {
            backing.close()
            throw error
        }
        switch backing {
        case .sqlite(let monitor):
            let store = monitor.store
            retention = configuration.retention.map { age in
                Retention(path: configuration.databasePath, age: age, interval: configuration.retentionInterval,
                          clock: configuration.clock, catchUp: { store.catchUp() }, log: configuration.log)
            }
            postgresRetention = nil
        case .postgres:
            retention = nil
            postgresRetention = configuration.retention.map { age in
                PostgresRetention(uri: configuration.databasePath, password: databasePassword, age: age,
                                  interval: configuration.retentionInterval, clock: configuration.clock, log: configuration.log)
            }
        }
        retention?.start()
        postgresRetention?.start()
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
        postgresRetention?.stop()
        backing.close()
    }
}

/// What answers the requests (`buildMonitor`), over one store or the other: the HTTP server is
/// bound to its router.
private enum StoreBacking: Sendable {
    case sqlite(Monitor<EventStore>)
    case postgres(Monitor<PostgresEventStore>)

    var router: Router {
        switch self {
        case .sqlite(let monitor): monitor.router
        case .postgres(let monitor): monitor.router
        }
    }

    func close() {
        switch self {
        case .sqlite(let monitor): monitor.store.close()
        case .postgres(let monitor): monitor.store.close()
        }
    }
}
