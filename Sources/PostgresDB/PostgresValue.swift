/// One value bound to a parameter or read from a column.
///
/// Results arrive in libpq's text format and are typed by their column's type: `bigint`,
/// `integer`, `smallint` as `.integer`; `double precision`, `real` as `.real`; `boolean`;
/// `bytea` as `.bytes`; everything else (text, numeric, jsonb, timestamps) as `.text`.
public enum PostgresValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case bytes([UInt8])
    case boolean(Bool)

    /// `.text(value)`, or `.null` when `value` is nil.
    public init(_ value: String?) {
        self = value.map(PostgresValue.text) ?? .null
    }

    /// `.integer(value)`, or `.null` when `value` is nil.
    public init(_ value: Int64?) {
        self = value.map(PostgresValue.integer) ?? .null
    }

    /// `.integer(Int64(value))`.
    public init(_ value: Int) {
        self = .integer(Int64(value))
    }

    /// `.real(value)`, or `.null` when `value` is nil.
    public init(_ value: Double?) {
        self = value.map(PostgresValue.real) ?? .null
    }

    public var isNull: Bool {
        if case .null = self { true } else { false }
    }

    /// The integer, or nil when this is not `.integer`.
    public var int64Value: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// The number as a double: `.real`, or `.integer` converted; nil otherwise.
    public var doubleValue: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    /// The text, or nil when this is not `.text`.
    public var textValue: String? {
        if case .text(let value) = self { value } else { nil }
    }

    /// The bytes, or nil when this is not `.bytes`.
    public var bytesValue: [UInt8]? {
        if case .bytes(let value) = self { value } else { nil }
    }

    /// The boolean, or nil when this is not `.boolean`.
    public var boolValue: Bool? {
        if case .boolean(let value) = self { value } else { nil }
    }
}

// Literals make bindings read like the SQL they fill: `try db.query(sql, [42, "name", .null])`.
extension PostgresValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByBooleanLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
}
