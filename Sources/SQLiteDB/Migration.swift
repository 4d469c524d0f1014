/// One step of a schema: SQL, or Swift code for a change that SQL cannot express (rewriting
/// values with rules the program owns). Either runs inside the step's transaction, with its
/// version bump, so a step is applied whole or not at all.
public enum Migration: Sendable, ExpressibleByStringLiteral {
    case sql(String)
    case code(@Sendable (Database) throws(SQLiteError) -> Void)

    public init(stringLiteral sql: String) { self = .sql(sql) }

    func apply(to db: Database) throws(SQLiteError) {
        switch self {
        case .sql(let sql): try db.execute(sql)
        case .code(let body): try body(db)
        }
    }
}
