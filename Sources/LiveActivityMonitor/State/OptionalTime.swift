/// A `Double?` in 8 bytes instead of 16 (9 and its padding): NaN stands for nil. Records keep
/// a dozen such times and values, a million records at once (docs/ARCHITECTURE.md, "What one
/// record costs"). As a property wrapper: `@OptionalTime var endedAt: Double?`.
///
/// No value it is given is NaN: JSON has no NaN (the decoder's numbers are finite or infinite),
/// and SQLite and PostgreSQL rows hold none (SQLite stores a NaN bound to it as NULL).
@propertyWrapper
public struct OptionalTime: Sendable, Hashable {
    private var bits: Double

    public init(wrappedValue: Double?) {
        assert(wrappedValue.map { !$0.isNaN } ?? true, "NaN stands for nil")
        bits = wrappedValue ?? .nan
    }

    public var wrappedValue: Double? {
        get { bits.isNaN ? nil : bits }
        set { bits = newValue ?? .nan }
    }

    /// Compares as `Double?` does (NaN is not equal to itself).
    public static func == (a: OptionalTime, b: OptionalTime) -> Bool { a.wrappedValue == b.wrappedValue }

    public func hash(into hasher: inout Hasher) { hasher.combine(wrappedValue) }
}
