internal import CSQLite3

extension Database {
    /// Brings the schema up to date: `steps[i]` takes `PRAGMA user_version` from `i` to `i + 1`.
    ///
    /// Each pending step runs with its version bump in one IMMEDIATE transaction, so a failing
    /// step leaves no trace and the version where it was. Applied steps are skipped, which makes
    /// this safe to run at every start, even from two processes at once. Steps may hold several
    /// statements (or be code) but must not BEGIN or COMMIT, nor change `journal_mode`.
    ///
    /// Throws when the database is newer than the code (`user_version > steps.count`): it was
    /// written by a later version, which this one must not write to.
    public func migrate(_ steps: [Migration]) throws(SQLiteError) {
        // Checked outside a transaction first, so an up-to-date (or read-only) database needs no write lock.
        guard try pendingStep(steps) != nil else { return }
        while true {
            try begin(.immediate)
            let finished: Bool
            do throws(SQLiteError) {
                finished = try applyPendingStep(steps)
            } catch {
                try rollBack(after: error)
                throw error
            }
            try commit()
            if finished { return }
        }
    }

    /// How many of `steps` ``migrate(_:)`` would apply (0 when up to date), applying none and
    /// taking no lock. Throws what `migrate` throws for a database newer than the code, so that
    /// a tool using the database without migrating it (pruning, say) refuses the same files.
    @discardableResult
    public func pendingMigrations(_ steps: [Migration]) throws(SQLiteError) -> Int {
        guard let next = try pendingStep(steps) else { return 0 }
        return steps.count - next
    }

    /// Inside a transaction, applies the next pending step; true when there was none.
    private func applyPendingStep(_ steps: [Migration]) throws(SQLiteError) -> Bool {
        // Read again under the write lock: another connection may have migrated meanwhile.
        guard let version = try pendingStep(steps) else { return true }
        do throws(SQLiteError) {
            try steps[version].apply(to: self)
        } catch {
            throw error.prefixed("migration step \(version) (user_version \(version) → \(version + 1)) failed")
        }
        try setUserVersion(version + 1)
        return false
    }

    /// The index of the next step to run, nil when up to date.
    private func pendingStep(_ steps: [Migration]) throws(SQLiteError) -> Int? {
        let version = try userVersion
        guard version >= 0 else {
            throw SQLiteError(code: SQLITE_ERROR, message: "\(path) has user_version \(version); schema versions start at 0")
        }
        guard version <= steps.count else {
            throw SQLiteError(
                code: SQLITE_ERROR,
                message: "\(path) has schema version \(version) but this program knows only \(steps.count): "
                    + "it was written by a newer version; refusing to use it")
        }
        return version < steps.count ? version : nil
    }
}
