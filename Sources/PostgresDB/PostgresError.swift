internal import CPostgreSQL

/// A failed libpq call: the server's SQLSTATE and primary message, or libpq's own message when
/// the server never answered (connection refused or lost), with what was being done.
///
/// The server's DETAIL is not kept: it quotes row values ("Key (event_id)=(…) already exists"),
/// and these errors are logged. The primary message can still quote a value the server could not
/// parse ("invalid input syntax for type bigint: …"); the store binds only values it produced.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The five-character SQLSTATE ("23505"), nil when the error did not come from the server.
    public let sqlState: String?
    /// The server's primary message (or libpq's), then what was being done.
    public let message: String
    /// The constraint a violation names, when the server says.
    public let constraint: String?

    public init(sqlState: String?, message: String, constraint: String? = nil) {
        self.sqlState = sqlState
        self.message = message
        self.constraint = constraint
    }

    /// A UNIQUE or PRIMARY KEY violation (23505).
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// Any integrity constraint (class 23: NOT NULL, FOREIGN KEY, UNIQUE, CHECK, EXCLUSION).
    public var isConstraint: Bool { sqlState?.hasPrefix("23") == true }
    /// The connection failed or was lost (class 08, or no answer from the server at all).
    public var isConnectionFailure: Bool { sqlState == nil || sqlState?.hasPrefix("08") == true }
    /// A write in a read-only transaction, such as on a hot standby (25006).
    public var isReadOnly: Bool { sqlState == "25006" }
    /// The server's disk is full (53100).
    public var isDiskFull: Bool { sqlState == "53100" }
    /// A value the server will not take (class 22, data exception: a text holding U+0000, a
    /// number out of range): about what was sent, not the connection or the server.
    public var isDataException: Bool { sqlState?.hasPrefix("22") == true }

    public var description: String {
        "PostgreSQL error" + (sqlState.map { " \($0)" } ?? "") + ": \(message)"
    }

    /// The same error with `context` in front of its message.
    func prefixed(_ context: String) -> PostgresError {
        PostgresError(sqlState: sqlState, message: "\(context): \(message)", constraint: constraint)
    }

    /// The error a failed result carries.
    static func from(result: OpaquePointer, _ context: String) -> PostgresError {
        func field(_ code: Int32) -> String? {
            PQresultErrorField(result, code).map { String(cString: $0) }
        }
        let primary = field(CPostgreSQL_diag_message_primary())
            ?? trimmed(String(cString: PQresultErrorMessage(result)))
        return PostgresError(sqlState: field(CPostgreSQL_diag_sqlstate()),
                             message: context.isEmpty ? primary : "\(primary), \(context)",
                             constraint: field(CPostgreSQL_diag_constraint_name()))
    }

    /// libpq's messages end with a newline (and may hold several lines).
    static func trimmed(_ message: String) -> String {
        let lines = message.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
        return lines.isEmpty ? "unknown error" : lines.joined(separator: "; ")
    }

    /// `sql` shortened for error messages: statements are named, not dumped.
    static func excerpt(_ sql: String) -> String {
        let limit = 160
        let flat = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return flat.count <= limit ? flat : flat.prefix(limit) + "…"
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
