extension PostgresConnection {
    /// Runs `body` in a transaction: COMMIT when it returns, ROLLBACK when it throws, after which
    /// its error is rethrown unchanged.
    ///
    /// A statement that failed inside `body` aborts the transaction even if `body` caught its
    /// error; PostgreSQL would then answer COMMIT with a silent ROLLBACK. That is refused here:
    /// the transaction is rolled back and an error thrown, so a caller never takes a rolled-back
    /// transaction for committed. Transactions do not nest.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
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

    /// COMMIT, refusing an aborted transaction (rolled back instead, and thrown).
    func commit() throws(PostgresError) {
        if isInFailedTransaction {
            try rollBack(after: nil)
            throw PostgresError(sqlState: "25P02", message: "a statement failed in the transaction, which was rolled back instead of committed")
        }
        // When COMMIT itself fails (a deferred constraint, a lost connection) the server has
        // ended the transaction; a connection still in one is rolled back.
        do throws(PostgresError) {
            try execute("COMMIT")
        } catch {
            if isConnected && isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Rolls back the open transaction, if any. Throws only when the rollback itself fails; a
    /// lost connection has no transaction left to roll back.
    ///
    /// - Parameter cause: why; a caller's error is named only by its type, since it may carry values.
    func rollBack(after cause: (any Error)?) throws(PostgresError) {
        guard isConnected, isInTransaction else { return }
        do throws(PostgresError) {
            try execute("ROLLBACK")
        } catch {
            let reason = cause.map { ($0 as? PostgresError).map { "\"\($0.message)\"" } ?? "a thrown \(type(of: $0))" } ?? "an aborted transaction"
            throw error.prefixed("ROLLBACK after \(reason) failed")
        }
    }
}
