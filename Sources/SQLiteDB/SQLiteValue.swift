/// One SQLite value, as stored in a column or bound to a parameter.
///
/// SQLite has five storage classes; this is exactly those, with no conversions. Note that SQLite
/// stores a bound NaN as NULL.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// `.text(value)`, or `.null` when `value` is nil.
    public init(_ value: String?) {
        self = value.map(SQLiteValue.text) ?? .null
    }

    /// `.integer(Int64(value))`.
    public init(_ value: Int) {
        self = .integer(Int64(value))
    }

    /// True for `.null`.
    public var isNull: Bool {
        if case .null = self { true } else { false }
    }

    /// The integer, or nil when this is not `.integer`.
    public var int64Value: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// The real, or nil when this is not `.real`.
    public var doubleValue: Double? {
        if case .real(let value) = self { value } else { nil }
    }

    /// The text, or nil when this is not `.text`.
    public var textValue: String? {
        if case .text(let value) = self { value } else { nil }
    }

    /// The bytes, or nil when this is not `.blob`.
    public var blobValue: [UInt8]? {
        if case .blob(let value) = self { value } else { nil }
    }
}
