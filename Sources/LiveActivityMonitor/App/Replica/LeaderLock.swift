import PostgresDB

/// The leader lock's session (DESIGN.md section 9): a connection of its own that holds a
/// session-level advisory lock on the database. Only one session holds it; it is released
/// when the session ends, however it ends (the process killed, `pg_terminate_backend`, a
/// vanished machine's connection ended by keepalives: `PostgresStoreDatabase.connect`).
///
/// Not `Sendable`: one thread at a time uses it (`LeaderElection`).
final class LeaderLock {
    /// The advisory lock's key ("LAM_LEAD"); advisory locks are per database.
    static let key: Int64 = 0x4C41_4D5F_4C45_4144
    /// How the session shows in `pg_stat_activity` (to find it, or end it on purpose).
    static let applicationName = "live-activity-monitor leader lock"

    private let uri: String
    private let password: String?
    private var db: PostgresConnection?

    init(uri: String, password: String?) {
        self.uri = uri
        self.password = password
    }

    /// Tries once to take the lock, connecting first when there is no session; true when this
    /// session holds it. Call only while not holding it (a second take would nest).
    func tryTake() throws -> Bool {
        if db?.isConnected != true { db = try PostgresStoreDatabase.connect(uri: uri, password: password, applicationName: Self.applicationName) }
        return try db!.query("SELECT pg_try_advisory_lock($1::bigint)", [.integer(Self.key)]).scalar?.boolValue == true
    }

    /// Once holding the lock: brings the schema up to date and raises the leader epoch.
    func raiseEpoch() throws -> Int64 {
        guard let db else { throw PostgresError(sqlState: "08003", message: "no leader lock session") }
        try db.migrate(PostgresSchema.migrations)
        return try LeaderEpoch.take(db)
    }

    /// Whether the session, and so the lock, is still there: one round trip.
    func isAlive() -> Bool {
        guard let db else { return false }
        do {
            try db.query("SELECT 1")
            return true
        } catch {
            return false
        }
    }

    /// Releases the lock, then ends the session. Ending it alone releases the lock only once the
    /// server's backend has noticed and exited, after this returns: a replica started right
    /// after a graceful stop (a restart) found it still held and stood by.
    func release() {
        _ = try? db?.query("SELECT pg_advisory_unlock($1::bigint)", [.integer(Self.key)])
        db = nil
    }
}
