/// Opens the PostgreSQL store `configuration.databasePath` names (a `postgres://` URI; the
/// password, if any, given apart: `--db-password-file`) and builds the monitor over it, wired
/// exactly as over SQLite (`buildMonitor(_:store:)`). Binds no socket.
func buildPostgresMonitor(_ configuration: MonitorConfiguration, password: String? = nil) throws -> Monitor<PostgresEventStore> {
    let store = try PostgresEventStore(uri: configuration.databasePath, password: password, clock: configuration.clock,
                                       reservedTypes: configuration.reservedTypes,
                                       declaredShapes: configuration.declaredShapes,
                                       maxLiveActivities: configuration.maxLiveActivities,
                                       settings: configuration.engine, log: configuration.log)
    return buildMonitor(configuration, store: store)
}
