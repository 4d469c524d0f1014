/// What the leader runs (every SQLite server; over PostgreSQL the replica holding the leader
/// lock): the monitor over its store (`buildMonitor`), and retention. Stopped in order:
/// retention, then the writer and the database.
final class LeaderServices: Sendable {
    let backing: StoreBacking
    let retention: Retention?
    let postgresRetention: PostgresRetention?

    /// Opens the store and rebuilds state (over PostgreSQL with `epoch`, the leader epoch its
    /// commits check). Starts nothing else: see `start`.
    init(_ configuration: MonitorConfiguration, databasePassword: String?, epoch: Int64?) throws {
        if PostgresStoreDatabase.isPostgresURI(configuration.databasePath) {
            backing = .postgres(try buildPostgresMonitor(configuration, password: databasePassword, epoch: epoch))
            retention = nil
            postgresRetention = configuration.retention.map { age in
                PostgresRetention(uri: configuration.databasePath, password: databasePassword, age: age,
                                  interval: configuration.retentionInterval, clock: configuration.clock, log: configuration.log)
            }
        } else {
            let monitor = try buildMonitor(configuration)
            backing = .sqlite(monitor)
            let store = monitor.store
            retention = configuration.retention.map { age in
                Retention(path: configuration.databasePath, age: age, interval: configuration.retentionInterval,
                          clock: configuration.clock, catchUp: { store.catchUp() }, log: configuration.log)
            }
            postgresRetention = nil
        }
    }

    var router: Router { backing.router }

    func start() {
        retention?.start()
        postgresRetention?.start()
    }

    func stop() {
        retention?.stop()
        postgresRetention?.stop()
        backing.close()
    }
}

/// What answers the requests (`buildMonitor`), over one store or the other.
enum StoreBacking: Sendable {
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
