/// The rows a statement returned, copied out of libpq's result (which is freed at once), and
/// how many rows it affected.
public struct PostgresResult: Sendable {
    /// Column names, in order.
    public let columns: [String]
    public let rows: [[PostgresValue]]
    /// Rows inserted, updated, deleted or returned (`PQcmdTuples`); 0 for other commands.
    public let affectedRows: Int

    public var isEmpty: Bool { rows.isEmpty }

    /// The first column of the first row, or nil when there is no row.
    public var scalar: PostgresValue? { rows.first?.first }
}
