/// Opens the PostgreSQL store `configuration.databasePath` names (a `postgres://` URI; the
/// password, if any, given apart: `--db-password-file`) and builds the monitor over it, wired
/// exactly as over SQLite (`buildMonitor(_:store:)`). Binds no socket. With `epoch` (the leader
/// epoch this replica raised, `LeaderElection`), every commit checks it is still the leader's.
func buildPostgresMonitor(_ configuration: MonitorConfiguration, password: String? = nil,
                          epoch: Int64? = nil) throws -> Monitor<PostgresEventStore> {
    let store = try PostgresEventStore(uri: configuration.databasePath, password: password, clock: configuration.clock,
                                       reservedTypes: configuration.reservedTypes,
                                       declaredShapes: configuration.declaredShapes,
                                       maxLiveActivities: configuration.maxLiveActivities,
                                       settings: configuration.engine, epoch: epoch, log: configuration.log)
    return buildMonitor(configuration, store: store)
}
