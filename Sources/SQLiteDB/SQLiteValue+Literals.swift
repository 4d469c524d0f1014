// Literals make bindings read like the SQL they fill: `try db.run(sql, [42, "name", .null])`.
// No ExpressibleByNilLiteral: with it, `try db.scalar(sql) == nil` would compare against
// `.null` instead of asking whether there was a row.

extension SQLiteValue: ExpressibleByIntegerLiteral {
    /// An integer literal is `.integer`.
    public init(integerLiteral value: Int64) {
        self = .integer(value)
    }
}

extension SQLiteValue: ExpressibleByFloatLiteral {
    /// A float literal is `.real`.
    public init(floatLiteral value: Double) {
        self = .real(value)
    }
}

extension SQLiteValue: ExpressibleByStringLiteral {
    /// A string literal is `.text`.
    public init(stringLiteral value: String) {
        self = .text(value)
    }
}
