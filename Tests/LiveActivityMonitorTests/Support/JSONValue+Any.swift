import JSON

/// Builds JSON values tersely in tests.
extension JSONValue {
    init(_ any: Any) {
        switch any {
        case let v as JSONValue: self = v
        case let s as String: self = .string(s)
        case let b as Bool: self = .bool(b)
        case let i as Int: self = .number(JSONNumber(Int64(i)))
        case let d as Double: self = .number(JSONNumber(d))
        case let a as [Any]: self = .array(a.map(JSONValue.init))
        case let o as KeyValuePairs<String, Any>: self = .object(JSONObject(o.map { ($0.key, JSONValue($0.value)) }))
        case let o as [String: Any]: self = .object(JSONObject(o.sorted { $0.key < $1.key }.map { ($0.key, JSONValue($0.value)) }))
        default: self = .null
        }
    }
}
