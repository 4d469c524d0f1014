import Foundation
import HTTPServer
import Prometheus

/// The running server: the monitor (`buildMonitor`: store, metrics, handlers) bound to an HTTP
/// daemon, plus retention. `serve` and the live tests run it. Stops in order: HTTP, then
/// retention, then the writer and the database (then, over PostgreSQL, the leader lock).
///
/// Over PostgreSQL it is one replica of several (DESIGN.md section 9): it leads when it holds
/// the leader lock (`LeaderElection`), and until then answers as a standby (`ReplicaRole`).
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
    private let role: ReplicaRole
    private let election: LeaderElection?
    private let standbyStore: PostgresStandbyStore?
    private let http: HTTPServer
    private let httpLog: LogThrottle

    /// The SQLite store. Only a server on an SQLite file has one (`--db FILE`, the live tests'
    /// servers): over PostgreSQL this is a programming error.
    public var store: EventStore {
        guard case .leading(let services) = role.current, case .sqlite(let monitor) = services.backing else {
            preconditionFailure("this server's store is PostgreSQL, not SQLite")
        }
        return monitor.store
    }

    /// Whether this server leads now: always over SQLite; over PostgreSQL while it holds the
    /// leader lock.
    public var isLeader: Bool { role.isLeading }

    /// Whether it led and lost the leader lock (before `stop`).
    public var lostTheLead: Bool {
        if case .deposed = role.current { true } else { false }
    }

    /// Opens the database (an SQLite file, or PostgreSQL for a `postgres://` URI, with
    /// `databasePassword` when given), rebuilds state (`buildMonitor`), then binds the socket and
    /// starts serving (and retention, when configured).
    ///
    /// Over PostgreSQL it first tries the leader lock once: a replica alone on its database leads
    /// before it listens; otherwise it listens as a standby and keeps trying. `onDeposed` is
    /// called once if it led and lost the lock (it then answers as a standby, and its owner
    /// should stop it: `serve` exits non-zero).
    public init(_ configuration: MonitorConfiguration, databasePassword: String? = nil,
                onDeposed: @escaping @Sendable () -> Void = {}) throws {
        self.configuration = configuration
        let leading: Bool
        if PostgresStoreDatabase.isPostgresURI(configuration.databasePath) {
            let standbyStore = PostgresStandbyStore(uri: configuration.databasePath, password: databasePassword,
                                                    clock: configuration.clock, settings: configuration.engine,
                                                    reservedTypes: configuration.reservedTypes,
                                                    declaredShapes: configuration.declaredShapes,
                                                    maxLiveActivities: configuration.maxLiveActivities,
                                                    log: configuration.log)
            self.standbyStore = standbyStore
            let standby = StandbyAnswers(version: Self.version, revision: BuildInfo.revision,
                                         reads: buildMonitor(configuration, store: standbyStore).router,
                                         hasSnapshot: { standbyStore.hasSnapshot })
            let role = ReplicaRole(.standby, standby: standby)
            let log = configuration.log
            let election = LeaderElection(uri: configuration.databasePath, password: databasePassword, log: log,
                elected: { epoch in
                    // The standby's snapshot goes first: the leader's state is not held twice.
                    let wasRefreshing = standbyStore.stopRefreshing()
                    let services: LeaderServices
                    do {
                        services = try LeaderServices(configuration, databasePassword: databasePassword, epoch: epoch)
                    } catch {
                        if wasRefreshing { standbyStore.startRefreshing() }
                        throw error
                    }
                    services.start()
                    role.lead(services)
                },
                lost: {
                    role.markDeposed()
                    log("leader: the leader lock's session is gone: no longer taking events; stopping, to come back as a standby")
                    onDeposed()
                })
            leading = try election.attempt()
            self.role = role
            self.election = election
        } else {
            let services = try LeaderServices(configuration, databasePassword: databasePassword, epoch: nil)
            role = ReplicaRole(.leading(services), standby: StandbyAnswers(version: Self.version, revision: BuildInfo.revision))
            election = nil
            standbyStore = nil
            leading = true
        }
        let role = role
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
        http.serverAnswered = { path, status in role.countServerAnswer(path: path, status: status) }
        http.checkBeforeContinue = { request in role.checkBeforeContinue(request) }
        let httpLog = LogThrottle(clock: configuration.clock, write: configuration.log)
        self.httpLog = httpLog
        http.errorLog = { httpLog($0) }
        do {
            self.http = try HTTPServer(configuration: http, answering: { request, responder in
                role.handle(request) { responder.respond(building: $0) }
            })
        } catch {
            role.depose()?.stop()
            election?.release()
            standbyStore?.close()
            throw error
        }
        if let election {
            if !leading { standbyStore?.startRefreshing() }
            election.start(leading: leading)
        } else if case .leading(let services) = role.current {
            services.start()
        }
    }

    /// The bound port (useful with port 0).
    public var port: Int { http.port }

    public var baseURL: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "http://\(host):\(port)"
    }

    /// Stops accepting, lets in-flight requests finish, flushes the writer, closes the database,
    /// and lets another replica lead.
    public func stop() {
        http.stop()
        httpLog.flush()
        election?.stop()
        role.depose()?.stop()
        election?.release()
        standbyStore?.close()
    }
}
