import JSON
import Prometheus

/// The shape of a content-state as an app's `Codable` type encodes it (DESIGN.md section 4,
/// "Content shape"): each key's JSON kind, and which keys may be absent or null. Learned from
/// contents the app encoded itself, or declared by a template; a push whose content does not fit
/// it would not decode on the phone (`check`).
///
/// How deep it goes: every level. A nested object has a shape of its own (a nested `Codable`
/// struct decodes the same way); an array has one shape for all its elements (an array of
/// structs: a key some elements lack is optional). Numbers are one kind: JSON does not tell an
/// `Int` from a `Double` that happened to be whole, so a learned shape cannot either.
struct ObjectShape: Sendable, Equatable {
    /// By key. A key absent from some content, or null in one, is `optional`.
    var fields: [String: ValueShape] = [:]
    /// Whether any content was learned (or declared): until then every key is new, not optional.
    var learned = false

    /// Adds one content the app encoded.
    mutating func learn(_ object: JSONObject) {
        if !learned {
            learned = true
            for (key, value) in object.entries { fields[key] = ValueShape(value) }
            return
        }
        for (key, value) in object.entries {
            if fields[key] == nil {
                // Absent from the contents before: an optional the app leaves out when nil.
                var shape = ValueShape(value)
                shape.optional = true
                fields[key] = shape
            } else {
                fields[key]!.learn(value)
            }
        }
        for key in fields.keys where object[key] == nil { fields[key]!.optional = true }
    }

    /// What would not decode in `object`, one phrase per problem, in key order; empty when it
    /// decodes. Keys the shape does not know are ignored, as the decoder ignores them.
    func problems(in object: JSONObject, at path: String = "") -> [String] {
        // Keys in the dictionary's order, sorted only when there is something to say: every
        // push is judged on the writer, and sorting the keys of each was a quarter of the check.
        var found: [(key: String, problems: [String])] = []
        for (key, shape) in fields {
            let at = path.isEmpty ? Self.printable(key) : path + "." + Self.printable(key)
            guard let value = object[key] else {
                if !shape.optional { found.append((key, ["`\(at)` missing"])) }
                continue
            }
            let problems = shape.problems(in: value, at: at)
            if !problems.isEmpty { found.append((key, problems)) }
        }
        if found.count > 1 { found.sort { ExactText.precedes($0.key, $1.key) } }
        return found.flatMap(\.problems)
    }

    /// A key as a verdict's path shows it: a control character written as its JSON escape
    /// (`\u0000`), so that the detail is one printable line that every store can hold
    /// (PostgreSQL's text refuses U+0000) and no terminal acts on.
    static func printable(_ key: String) -> String {
        guard IdentifierText.hasControlCharacter(key) else { return key }
        var out = ""
        for scalar in key.unicodeScalars {
            // Cc is the set `hasControlCharacter` finds: C0, DEL and C1.
            if scalar.properties.generalCategory == .control {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// One key's (or an array's elements') shape.
struct ValueShape: Sendable, Equatable {
    /// The kinds seen, null aside (empty: only null seen, or a declared `any`: every kind fits).
    var kinds: JSONKinds = []
    /// Absent or null is fine (a Swift `Optional`).
    var optional = false
    /// The shape of its objects, once an object was seen.
    var object: ObjectShape?
    /// The shape of its arrays' elements, once an element was seen.
    var element: Element?

    /// A box: a shape holds the shape of its elements.
    final class Element: Sendable, Equatable {
        let shape: ValueShape
        init(_ shape: ValueShape) { self.shape = shape }
        static func == (a: Element, b: Element) -> Bool { a.shape == b.shape }
    }

    init() {}

    /// The shape of the first value seen.
    init(_ value: JSONValue) {
        learn(value)
    }

    mutating func learn(_ value: JSONValue) {
        switch value {
        case .null:
            optional = true
        case .object(let object):
            kinds.insert(.object)
            var shape = self.object ?? ObjectShape()
            shape.learn(object)
            self.object = shape
        case .array(let values):
            kinds.insert(.array)
            var shape = element?.shape
            for value in values {
                if shape == nil { shape = ValueShape(value) } else { shape!.learn(value) }
            }
            if let shape, shape != element?.shape { element = Element(shape) }
        default:
            kinds.insert(JSONKinds(JSONKind(value)))
        }
    }

    func problems(in value: JSONValue, at path: String) -> [String] {
        if case .null = value {
            if optional || kinds.isEmpty { return [] }
            return ["`\(path)`: null where the app sends \(Self.described(kinds))"]
        }
        guard !kinds.isEmpty else { return [] }
        let kind = JSONKind(value)
        guard kinds.contains(JSONKinds(kind)) else {
            return ["`\(path)`: \(kind.rawValue) where the app sends \(Self.described(kinds))"]
        }
        switch value {
        case .object(let object):
            return self.object?.problems(in: object, at: path) ?? []
        case .array(let values):
            guard let element = element?.shape else { return [] }
            for (i, value) in values.enumerated() {
                let found = element.problems(in: value, at: "\(path)[\(i)]")
                if !found.isEmpty { return found }  // the first element that fails is enough
            }
            return []
        default:
            return []
        }
    }

    /// "a string", "a number or a string".
    static func described(_ kinds: JSONKinds) -> String {
        kinds.members.sorted { $0.rawValue < $1.rawValue }.map { ($0 == .array || $0 == .object ? "an " : "a ") + $0.rawValue }
            .joined(separator: " or ")
    }
}

/// A JSON value's kind, as a content shape names it.
enum JSONKind: String, Sendable, CaseIterable {
    case string, number, bool, object, array, null

    init(_ value: JSONValue) {
        switch value {
        case .string: self = .string
        case .number: self = .number
        case .bool: self = .bool
        case .object: self = .object
        case .array: self = .array
        case .null: self = .null
        }
    }
}

/// A set of kinds, as bits: every judged value asks it whether its kind was seen, and a
/// `Set<JSONKind>` hashed the kind for each (PERFORMANCE.md, session 19).
struct JSONKinds: OptionSet, Sendable, Hashable {
    let rawValue: UInt8

    init(rawValue: UInt8) { self.rawValue = rawValue }

    init(_ kind: JSONKind) {
        switch kind {
        case .string: rawValue = 1
        case .number: rawValue = 2
        case .bool: rawValue = 4
        case .object: rawValue = 8
        case .array: rawValue = 16
        case .null: rawValue = 32
        }
    }

    static let string = JSONKinds(.string), number = JSONKinds(.number), bool = JSONKinds(.bool)
    static let object = JSONKinds(.object), array = JSONKinds(.array)

    /// The kinds in the set, in `JSONKind`'s order.
    var members: [JSONKind] { JSONKind.allCases.filter { contains(JSONKinds($0)) } }
}
