import JSON
import LiveActivityWire

/// Checks one event's field values against their schema rows, collecting every error instead
/// of stopping at the first. The messages are the 422's: clients and tests read them.
struct FieldReader {
    let index: Int
    var errors: [FieldError] = []

    mutating func fail(_ field: String, _ message: String) {
        errors.append(FieldError(index: index, field: field, error: message))
    }

    mutating func fail(_ row: FieldSpec, _ message: String) {
        fail(row.label, message)
    }

    /// The checked value of `row`'s field (`value`: its member's, nil when absent), or
    /// `.absent` when it is absent, null or invalid (then with its error).
    mutating func read(_ row: FieldSpec, _ value: JSONValue?, required: Bool) -> CheckedValue {
        guard let value = present(row, value, required: required) else { return .absent }
        switch row.kind {
        case .eventType(let maxLength):
            return string(row, value, maxLength: maxLength).map { .text($0) } ?? .absent
        case .identifier(let maxLength):
            guard let text = string(row, value, maxLength: maxLength) else { return .absent }
            if IdentifierText.hasControlCharacter(text) {
                fail(row, IdentifierText.controlCharacterError)
                return .absent
            }
            return .text(text)
        case .enumeration(let choices):
            guard case .string(let text) = value, let position = choices.values.firstIndex(of: text) else {
                fail(row, choices.message)
                return .absent
            }
            return .choice(position)
        case .date(let window):
            return date(row, value, window: window).map { .number($0) } ?? .absent
        case .number(let range):
            guard case .number(let number) = value else { fail(row, "must be a number"); return .absent }
            let d = number.doubleValue
            guard d.isFinite, range.contains(d) else {
                fail(row, "out of range (\(JSONNumber(range.lowerBound))–\(JSONNumber(range.upperBound)))")
                return .absent
            }
            return .number(d)
        case .integer(let rule):
            guard case .number(let number) = value, let integer = number.int64Value else {
                fail(row, "must be an integer")
                return .absent
            }
            let range = rule.bounds.range
            guard range.contains(Int(clamping: integer)) else {
                fail(row, "out of range (\(range.lowerBound)–\(range.upperBound))")
                return .absent
            }
            guard rule.bounds.accepts(Int(integer)) else {
                fail(row, rule.refusedMessage)
                return .absent
            }
            return .integer(Int(integer))
        case .content(let maxBytes):
            guard case .object = value else { fail(row, "must be a JSON object"); return .absent }
            let text = JSONText(value)
            let size = text.text.utf8.count
            guard size <= maxBytes else {
                fail(row, "\(size) bytes; ActivityKit allows at most \(maxBytes)")
                return .absent
            }
            return .content(text)
        case .alert(let maxLength):
            return alert(row, value, maxLength: maxLength) ? .valid : .absent
        case .token(let token):
            guard var text = string(row, value, maxLength: token.maxLength) else { return .absent }
            guard text.withUTF8({ token.accepts($0) }) else {
                fail(row, token.message)
                return .absent
            }
            return .fingerprint(TokenFingerprint.of(text))
        }
    }

    /// The value, or nil when absent or JSON null.
    private mutating func present(_ row: FieldSpec, _ value: JSONValue?, required: Bool) -> JSONValue? {
        guard let value, value != .null else {
            if required { fail(row, "required") }
            return nil
        }
        return value
    }

    /// `value` (`row`'s, nil when absent) as a string of 1 to `maxLength` bytes.
    mutating func string(_ row: FieldSpec, _ value: JSONValue?, required: Bool, maxLength: Int) -> String? {
        guard let value = present(row, value, required: required) else { return nil }
        return string(row, value, maxLength: maxLength)
    }

    private mutating func string(_ row: FieldSpec, _ value: JSONValue, maxLength: Int) -> String? {
        guard case .string(let s) = value else { fail(row, "must be a string"); return nil }
        if s.isEmpty { fail(row, "must not be empty"); return nil }
        if s.utf8.count > maxLength { fail(row, "longer than \(maxLength) bytes"); return nil }
        return s
    }

    static func dateValue(_ value: JSONValue) -> Double? {
        switch value {
        case .number(let n): return n.doubleValue.isFinite ? n.doubleValue : nil
        case .string(let s): return RFC3339.parse(s)
        default: return nil
        }
    }

    private mutating func date(_ row: FieldSpec, _ value: JSONValue, window: Range<Double>) -> Double? {
        guard let seconds = FieldReader.dateValue(value) else {
            fail(row, "must be an RFC 3339 date-time string or Unix seconds")
            return nil
        }
        guard window.contains(seconds) else {
            fail(row, "\(EventSchema.windowText(window)): \(RFC3339.text(seconds))")
            return nil
        }
        return seconds
    }

    /// `{title, body}` (`FieldSpec.alertParts`), each a string of at most `maxLength` bytes.
    private mutating func alert(_ row: FieldSpec, _ value: JSONValue, maxLength: Int) -> Bool {
        let parts = FieldSpec.alertParts.map(\.description)
        guard case .object(let alert) = value else {
            fail(row, "must be an object {\(parts.joined(separator: ", "))}")
            return false
        }
        var valid = true
        for (key, part) in alert.entries {
            guard parts.contains(key) else {
                fail("\(row.name).\(key)", "unknown field; alert has \(parts.joined(separator: " and "))")
                valid = false
                continue
            }
            guard case .string(let s) = part, s.utf8.count <= maxLength else {
                fail("\(row.name).\(key)", "must be a string of at most \(maxLength) bytes")
                valid = false
                continue
            }
        }
        return valid
    }
}
