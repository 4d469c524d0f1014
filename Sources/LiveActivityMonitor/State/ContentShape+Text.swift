import JSON
import Prometheus

/// A content shape as text: one JSON object, path → type, the form a template declares
/// (`content_shape`, Web/templates/FORMAT.md), `GET /api/shapes` serves and the
/// `content_shapes` table keeps.
///
/// - A path is a key (`driverName`), a key of a nested object (`driver.name`), or the elements of
///   an array (`stops[]`, `stops[].city`). In a key, `.`, `[`, `]` and `\` are written after a `\`.
/// - A type is a kind (`string`, `number`, `bool`, `object`, `array`), several joined by `|`, or
///   `any`; a final `?` makes it optional (absent or null decodes: a Swift `Optional`).
/// - A path whose parent is not listed has a required object (or array) for parent.
extension ObjectShape {
    /// Path → type, in path order (parents first).
    var text: JSONObject {
        var out: [(String, JSONValue)] = []
        write(prefix: "", into: &out)
        return JSONObject(out)
    }

    private func write(prefix: String, into out: inout [(String, JSONValue)]) {
        for key in fields.keys.sorted(by: { ExactText.precedes($0, $1) }) {
            let path = prefix.isEmpty ? Self.escaped(key) : prefix + "." + Self.escaped(key)
            fields[key]!.write(path: path, into: &out)
        }
    }

    static func escaped(_ key: String) -> String {
        var out = ""
        for c in key {
            if c == "." || c == "[" || c == "]" || c == "\\" { out.append("\\") }
            out.append(c)
        }
        return out
    }

    /// The shape a text describes; nil (with why) when a path or a type cannot be read.
    static func parse(_ text: JSONObject) -> Result<ObjectShape, ShapeTextError> {
        var shape = ObjectShape(learned: true)
        for (path, type) in text.entries {
            guard case .string(let typeText) = type, let value = ValueShape(type: typeText) else {
                return .failure(ShapeTextError("`\(path)`: the type must be a string such as \"string\", \"number?\" or \"string|number\""))
            }
            guard let steps = Self.steps(path), !steps.isEmpty else {
                return .failure(ShapeTextError("`\(path)`: not a path (keys joined by `.`, `[]` for an array's elements)"))
            }
            shape.declare(steps[...], value)
        }
        return .success(shape)
    }

    /// One step down a path: a key, or an array's elements.
    enum Step: Equatable { case key(String), elements }

    static func steps(_ path: String) -> [Step]? {
        var steps: [Step] = []
        var key = "", escaping = false, keyOpen = true
        var chars = Array(path)[...]
        while let c = chars.popFirst() {
            if escaping { key.append(c); escaping = false; continue }
            switch c {
            case "\\": escaping = true
            case ".":
                if keyOpen { guard !key.isEmpty else { return nil }; steps.append(.key(key)) }
                key = ""; keyOpen = true
            case "[":
                guard chars.popFirst() == "]" else { return nil }
                if keyOpen { guard !key.isEmpty else { return nil }; steps.append(.key(key)) }
                steps.append(.elements)
                key = ""; keyOpen = false
            case "]": return nil
            default:
                guard keyOpen else { return nil }  // `a[]b`: a key follows a `.`
                key.append(c)
            }
        }
        if escaping { return nil }
        if keyOpen { guard !key.isEmpty else { return nil }; steps.append(.key(key)) }
        return steps
    }

    private mutating func declare(_ steps: ArraySlice<Step>, _ value: ValueShape) {
        guard case .key(let key)? = steps.first else { return }
        let rest = steps.dropFirst()
        if rest.isEmpty {
            // A child listed before its parent keeps what it made.
            var declared = value
            declared.object = fields[key]?.object ?? (value.kinds.contains(.object) ? ObjectShape(learned: true) : nil)
            declared.element = fields[key]?.element
            fields[key] = declared
            return
        }
        var parent = fields[key] ?? ValueShape(kinds: rest.first == .elements ? [.array] : [.object])
        parent.declare(rest, value)
        fields[key] = parent
    }
}

extension ValueShape {
    init(kinds: JSONKinds, optional: Bool = false) {
        self.kinds = kinds
        self.optional = optional
    }

    /// A type's text: `string`, `number|string`, `any`, each with a final `?` for optional.
    init?(type text: String) {
        var body = Substring(text)
        if body.hasSuffix("?") { body.removeLast(); optional = true }
        if body == "any" { return }
        for name in body.split(separator: "|", omittingEmptySubsequences: false) {
            guard let kind = JSONKind(rawValue: String(name)), kind != .null else { return nil }
            kinds.insert(JSONKinds(kind))
        }
    }

    var typeText: String {
        (kinds.isEmpty ? "any" : kinds.members.map(\.rawValue).sorted().joined(separator: "|")) + (optional ? "?" : "")
    }

    fileprivate func write(path: String, into out: inout [(String, JSONValue)]) {
        out.append((path, .string(typeText)))
        if let object { object.writeFields(prefix: path, into: &out) }
        if let element = element?.shape { element.write(path: path + "[]", into: &out) }
    }

    /// Declares a shape below this value (`steps` start with a key of its objects or `elements`).
    fileprivate mutating func declare(_ steps: ArraySlice<Step>, _ value: ValueShape) {
        switch steps.first {
        case .elements?:
            kinds.insert(.array)
            let rest = steps.dropFirst()
            if rest.isEmpty {
                var declared = value
                declared.object = element?.shape.object ?? (value.kinds.contains(.object) ? ObjectShape(learned: true) : nil)
                element = Element(declared)
            } else {
                var shape = element?.shape ?? ValueShape(kinds: rest.first == .elements ? [.array] : [.object])
                shape.declare(rest, value)
                element = Element(shape)
            }
        case .key?:
            kinds.insert(.object)
            var object = self.object ?? ObjectShape(learned: true)
            object.declareField(steps, value)
            self.object = object
        case nil:
            break
        }
    }

    typealias Step = ObjectShape.Step
}

extension ObjectShape {
    fileprivate func writeFields(prefix: String, into out: inout [(String, JSONValue)]) {
        write(prefix: prefix, into: &out)
    }

    fileprivate mutating func declareField(_ steps: ArraySlice<Step>, _ value: ValueShape) {
        declare(steps, value)
    }
}

/// Why a shape's text cannot be read.
struct ShapeTextError: Error, CustomStringConvertible, Sendable {
    let description: String
    init(_ description: String) { self.description = description }
}
