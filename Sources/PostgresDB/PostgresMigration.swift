/// One step of a schema: SQL (several statements allowed), or Swift code for a change SQL cannot
/// express. Either runs inside the step's transaction, with its version row, so a step is applied
/// whole or not at all (PostgreSQL's DDL is transactional).
public enum PostgresMigration: Sendable, ExpressibleByStringLiteral {
    case sql(String)
    case code(@Sendable (PostgresConnection) throws -> Void)

    public init(stringLiteral sql: String) { self = .sql(sql) }

    func apply(to connection: PostgresConnection) throws {
        switch self {
        case .sql(let sql): try connection.execute(sql)
        case .code(let body): try body(connection)
        }
    }
}
