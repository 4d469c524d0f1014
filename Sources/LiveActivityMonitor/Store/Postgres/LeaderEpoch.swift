import PostgresDB

/// Fencing for replicas on one database (DESIGN.md section 9): the `leader` table's epoch. A
/// replica that takes the leader lock raises it (`take`); every commit of its writer checks it
/// in the same transaction (`check`), holding the row in share mode until COMMIT. A new
/// leader's raise therefore waits for a commit in flight and every later commit of the old
/// leader fails: once a new leader has its epoch, a deposed one never commits again.
enum LeaderEpoch {
    /// A commit refused because another replica took the lead since this one did.
    struct Deposed: Error, CustomStringConvertible {
        let mine: Int64
        let current: Int64?

        var description: String {
            "this replica is no longer the leader (its epoch \(mine), the database's \(current.map(String.init) ?? "missing"))"
        }
    }

    /// Raises the epoch and returns the new one (called by the lock holder, outside any
    /// transaction of its own: it waits for the commit a previous leader may have in flight).
    static func take(_ db: PostgresConnection) throws -> Int64 {
        guard let epoch = try db.query("UPDATE leader SET epoch = epoch + 1 WHERE id = $1 RETURNING epoch",
                                       [.integer(1)]).scalar?.int64Value else {
            throw PostgresError(sqlState: nil, message: "the leader table has no row (schema not migrated?)")
        }
        return epoch
    }

    /// Inside a commit's transaction: throws `Deposed` unless the epoch is still `mine`.
    static func check(_ mine: Int64, _ db: PostgresConnection) throws {
        let current = try db.prepared("SELECT epoch FROM leader WHERE id = $1 FOR SHARE", [.integer(1)]).scalar?.int64Value
        guard current == mine else { throw Deposed(mine: mine, current: current) }
    }
}
