extension Database {
    /// How a transaction takes its locks.
    public enum TransactionKind: Sendable {
        /// `BEGIN DEFERRED`: no lock until the first read or write; a later write may then fail
        /// with `isBusy` without waiting, if another connection wrote meanwhile.
        case deferred
        /// `BEGIN IMMEDIATE`: takes the write lock at once (waiting up to the busy timeout), so
        /// the writes inside cannot fail with `isBusy`. The right kind for any write.
        case immediate
    }

    /// Runs `body` in a transaction: COMMIT when it returns, ROLLBACK when it throws, after
    /// which its error is rethrown unchanged.
    ///
    /// When COMMIT fails, the transaction is rolled back and the COMMIT error thrown. When the
    /// ROLLBACK itself fails, that error is thrown instead, since the connection may then still
    /// be in the transaction. Transactions do not nest: `body` must not start another.
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try begin(kind)
        let result: T
        do {
            result = try body()
        } catch {
            try rollBack(after: error)
            throw error
        }
        try commit()
        return result
    }

    func begin(_ kind: TransactionKind) throws(SQLiteError) {
        try run(kind == .immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
    }

    /// COMMIT; when that fails, rolls back so the connection is not left in the transaction.
    func commit() throws(SQLiteError) {
        do throws(SQLiteError) {
            try run("COMMIT")
        } catch {
            try rollBack(after: error)
            throw error
        }
    }

    /// Rolls back the open transaction, if SQLite has not already (it does on some errors, such
    /// as SQLITE_FULL). Throws only when the rollback itself fails.
    ///
    /// - Parameter cause: why; a caller's error is named only by its type, since it may carry
    ///   values, while SQLite's own messages never do.
    func rollBack(after cause: any Error) throws(SQLiteError) {
        guard isInTransaction else { return }
        do throws(SQLiteError) {
            try run("ROLLBACK")
        } catch {
            let reason = (cause as? SQLiteError).map { "\"\($0.message)\"" } ?? "a thrown \(type(of: cause))"
            throw error.prefixed("ROLLBACK after \(reason) failed")
        }
    }
}
