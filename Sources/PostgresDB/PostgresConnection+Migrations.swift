extension PostgresConnection {
    /// The newest schema version `migrate` recorded (0 for a database it never touched).
    public func schemaVersion() throws(PostgresError) -> Int {
        guard try scalar("SELECT to_regclass('schema_migrations') IS NOT NULL")?.boolValue == true else { return 0 }
        return Int(try scalar("SELECT coalesce(max(version), 0)::bigint FROM schema_migrations")?.int64Value ?? 0)
    }

    /// Brings the schema up to date: `steps[i]` takes the version from `i` to `i + 1`, each in a
    /// transaction of its own with its row in `schema_migrations`, so a failing step leaves no
    /// trace and the version where it was. Applied steps are skipped, which makes this safe at
    /// every start, also from several processes at once: each step holds a transaction-scoped
    /// advisory lock (`lockKey`) and reads the version again under it.
    ///
    /// Throws when the database is newer than the code (a version above `steps.count`): it was
    /// written by a later version, which this one must not write to.
    public func migrate(_ steps: [PostgresMigration], lockKey: Int64 = PostgresConnection.migrationLockKey) throws {
        // Checked without a lock first, so an up-to-date database costs two reads.
        guard try pendingStep(steps) != nil else { return }
        while true {
            let finished: Bool = try transaction {
                try query("SELECT pg_advisory_xact_lock($1::bigint)", [.integer(lockKey)])
                try execute("""
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version    integer PRIMARY KEY,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """)
                // Read again under the lock: another process may have migrated meanwhile.
                guard let version = try pendingStep(steps) else { return true }
                do {
                    try steps[version].apply(to: self)
                } catch let error as PostgresError {
                    throw error.prefixed("migration step \(version) (version \(version) → \(version + 1)) failed")
                }
                try query("INSERT INTO schema_migrations (version) VALUES ($1::integer)", [.integer(Int64(version + 1))])
                return false
            }
            if finished { return }
        }
    }

    /// How many of `steps` `migrate` would apply (0 when up to date), applying none. Throws what
    /// `migrate` throws for a database newer than the code.
    @discardableResult
    public func pendingMigrations(_ steps: [PostgresMigration]) throws(PostgresError) -> Int {
        guard let next = try pendingStep(steps) else { return 0 }
        return steps.count - next
    }

    /// The advisory lock key migrations hold: any fixed number, the same in every process.
    public static let migrationLockKey: Int64 = 0x4C41_4D5F_4D49_4752  // "LAM_MIGR"

    private func pendingStep(_ steps: [PostgresMigration]) throws(PostgresError) -> Int? {
        let version = try schemaVersion()
        guard version <= steps.count else {
            throw PostgresError(
                sqlState: nil,
                message: "the database has schema version \(version) but this program knows only \(steps.count): "
                    + "it was written by a newer version; refusing to use it")
        }
        return version < steps.count ? version : nil
    }
}
