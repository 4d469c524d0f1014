import Foundation

/// A JSON value: an activity's `content_state` or `attributes`, which the monitor stores as
/// given. Build one from literals, or from your `ActivityAttributes.ContentState` with
/// `JSONContent(encoding:)`.
public enum JSONContent: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONContent])
    case object([String: JSONContent])

    /// The JSON that a default `JSONEncoder` makes of `value`: the same JSON ActivityKit decodes
    /// from an APNs `content-state` (so a `Date` is seconds since 2001-01-01, as in a push).
    public init(encoding value: some Encodable) throws {
        let data = try JSONEncoder().encode(value)
        self = try JSONDecoder().decode(JSONContent.self, from: data)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? container.decode(Int64.self) {
            self = .integer(i)
        } else if let d = try? container.decode(Double.self) {
            self = .number(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let a = try? container.decode([JSONContent].self) {
            self = .array(a)
        } else {
            self = .object(try container.decode([String: JSONContent].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .integer(let i): try container.encode(i)
        case .number(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }

    /// The members when this is an object.
    public var objectValue: [String: JSONContent]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The text when this is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The value when this is a number (integer or not).
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }
}

extension JSONContent: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral {
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONContent...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONContent)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
