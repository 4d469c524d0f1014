/// One JSON value, as parsed by ``JSONParser`` or built for ``JSONWriter``.
///
/// Numbers keep their literal text (``JSONNumber``) and objects keep their key order
/// (``JSONObject``), so a parsed value is written back exactly as it came in.
///
/// Equality is JSON's, not Swift's: numbers compare by numeric value (`1 == 1.0`), objects by
/// their key/value set ignoring order, arrays element by element in order, and strings by
/// their exact characters (so `"\u00e9"` and `"e\u0301"` differ, although Swift's `String`
/// calls them equal). `true` is not `1` and `null` is not `false`.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): JSONKey.same(a, b)
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .bool(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .number(let value):
            hasher.combine(2 as UInt8)
            hasher.combine(value)
        case .string(let value):
            hasher.combine(3 as UInt8)
            JSONKey.hash(value, into: &hasher)
        case .array(let value):
            hasher.combine(4 as UInt8)
            hasher.combine(value)
        case .object(let value):
            hasher.combine(5 as UInt8)
            hasher.combine(value)
        }
    }
}
