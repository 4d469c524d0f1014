import JSON

/// Turns one decoded JSON value into a validated `Event`, or names every problem with it.
/// The rules are DESIGN.md section 3; unknown fields are refused so that a typo such as
/// `contentState` is reported instead of silently dropped.
public enum EventValidator {
    static let maxIDLength = 128
    static let maxContentBytes = 4096
    /// Dates outside 2000-01-01 … 2100-01-01 are refused: they are clock bugs, not events.
    static let earliestDate = 946_684_800.0
    static let latestDate = 4_102_444_800.0

    static let commonFields: Set<String> = [
        "id", "type", "activity_id", "booking_id", "attributes_type", "occurred_at", "app",
    ]
    static let fieldsByType: [EventType: Set<String>] = [
        .activityStarted: ["content_state", "attributes", "stale_date", "relevance_score", "push_token", "source"],
        .activityUpdated: ["content_state", "timestamp", "stale_date", "relevance_score", "alert"],
        .activityTokenUpdated: ["push_token"],
        .activityStale: [],
        .activityDismissed: [],
        .activityEnded: ["content_state", "timestamp", "dismissal_date", "dismissal_policy"],
        .pushSent: ["event", "status", "latency_ms", "push_token", "priority", "reason", "apns_id",
                    "apns_unique_id", "payload_bytes", "timestamp", "content_state", "stale_date",
                    "dismissal_date", "relevance_score", "alert", "attributes"],
    ]
    /// Every field an event of each type may have.
    static let allowedFields: [EventType: FieldNames] = fieldsByType.mapValues { FieldNames($0.union(commonFields)) }

    /// The fields read as dates (RFC 3339 text or Unix seconds) and stored as RFC 3339.
    static let dateFields = ["occurred_at", "timestamp", "stale_date", "dismissal_date"]

    /// A valid event, or every problem found with it.
    public enum Outcome: Sendable {
        case valid(Event)
        case invalid([FieldError])
    }

    public static func validate(_ value: JSONValue, index: Int) -> Outcome {
        guard case .object(let object) = value else {
            return .invalid([FieldError(index: index, field: "", error: "an event must be a JSON object")])
        }
        var reader = FieldReader(object: object, index: index)

        let typeName = reader.string("type", required: true, maxLength: 64)
        guard let typeName else { return .invalid(reader.errors) }
        guard let type = EventType(rawValue: typeName) else {
            let known = EventType.allCases.map(\.rawValue).joined(separator: ", ")
            return .invalid([FieldError(index: index, field: "type", error: "unknown type \"\(typeName)\"; expected one of \(known)")])
        }
        let allowed = allowedFields[type] ?? FieldNames(commonFields)
        for (key, _) in object where !allowed.contains(key) {
            reader.fail(key, "unknown field for \(type.rawValue)")
        }

        let pushKind: PushKind? = type == .pushSent ? reader.enumeration("event", required: true) : nil
        let isPushStart = pushKind == .start
        let occurredAt = reader.date("occurred_at", required: true)
        var event = Event(type: type, occurredAt: occurredAt ?? 0)
        event.key = reader.identifier("id", maxLength: maxIDLength)
        event.activityID = reader.identifier("activity_id", required: !isPushStart, maxLength: maxIDLength)
        event.bookingID = reader.identifier("booking_id", required: type == .activityStarted || isPushStart, maxLength: maxIDLength)
        event.attributesType = reader.identifier("attributes_type", required: type == .activityStarted, maxLength: maxIDLength)
        event.app = reader.identifier("app", maxLength: 255)
        event.contentState = reader.contentObject("content_state",
                                                  required: type == .activityStarted || type == .activityUpdated)
        event.attributes = reader.contentObject("attributes", required: false)
        event.staleDate = reader.date("stale_date")
        event.dismissalDate = reader.date("dismissal_date")
        event.relevanceScore = reader.number("relevance_score", range: -1e9...1e9)
        event.timestamp = reader.date("timestamp") ?? event.occurredAt
        event.source = reader.enumeration("source") ?? .app
        event.dismissalPolicy = reader.enumeration("dismissal_policy")
        if event.dismissalPolicy == .after, event.dismissalDate == nil {
            reader.fail("dismissal_date", "required when dismissal_policy is \"after\"")
        }
        reader.alert("alert")

        let tokenRequired = type == .activityTokenUpdated || type == .pushSent
        if let token = reader.hexToken("push_token", required: tokenRequired) {
            event.tokenFingerprint = TokenFingerprint.of(token)
        }
        if let pushKind {
            let status = reader.integer("status", required: true, range: 0...599)
            if let status, status != 0, status < 100 {
                reader.fail("status", "must be an HTTP status (100–599), or 0 when APNs gave no answer")
            }
            let latency = reader.number("latency_ms", required: true, range: 0...3_600_000)
            let priority = reader.integer("priority", range: 5...10) ?? 10
            if priority != 5, priority != 10 { reader.fail("priority", "must be 5 or 10") }
            let payload = reader.integer("payload_bytes", range: 0...1_048_576)
            let reason = reader.identifier("reason", maxLength: 64)
            _ = reader.identifier("apns_id", maxLength: 64)
            _ = reader.identifier("apns_unique_id", maxLength: 64)
            if let status, let latency {
                event.push = PushResult(kind: pushKind, status: status, reason: reason, latencyMs: latency,
                                        priority: priority, payloadBytes: payload)
            }
        }
        guard reader.errors.isEmpty else { return .invalid(reader.errors) }
        event.body = storedBody(object, fingerprint: event.tokenFingerprint, dates: reader.dates, texts: reader.texts)
        return .valid(event)
    }

    /// The stored text: dates as RFC 3339 UTC, the raw token swapped for its fingerprint, a null
    /// `booking_id` left out (so that the writer can append an inherited one). Written straight
    /// from the parsed object: building a normalised copy first cost a sixth of batched decoding.
    /// `dates` and `texts` are fields as the reader already read them (dates parsed, content
    /// objects written as text), so that none is parsed or written twice.
    static func storedBody(_ object: JSONObject, fingerprint: String?, dates: [(field: String, seconds: Double)],
                           texts: [(field: String, text: JSONText)]) -> String {
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        for (key, value) in object.entries {
            if FieldNames.same(key, "push_token") {
                w.key("token_fingerprint"); w.string(fingerprint)
            } else if FieldNames.same(key, "booking_id"), value == .null {
                continue
            } else if let date = dates.first(where: { FieldNames.same($0.field, key) }) {
                w.key(key); w.string(RFC3339.format(date.seconds))
            } else if let text = texts.first(where: { FieldNames.same($0.field, key) }) {
                w.key(key); w.write(text.text)
            } else {
                w.key(key); w.write(value)
            }
        }
        w.endObject()
        return w.string
    }
}

/// Reads typed fields from one event object, collecting every error instead of stopping at the first.
struct FieldReader {
    let object: JSONObject
    let index: Int
    var errors: [FieldError] = []
    /// Every valid date read, and every content object written as text, for the stored body.
    var dates: [(field: String, seconds: Double)] = []
    var texts: [(field: String, text: JSONText)] = []

    mutating func fail(_ field: String, _ message: String) {
        errors.append(FieldError(index: index, field: field, error: message))
    }

    /// The value, or nil when absent or JSON null.
    private mutating func present(_ field: String, required: Bool) -> JSONValue? {
        guard let value = object[field], value != .null else {
            if required { fail(field, "required") }
            return nil
        }
        return value
    }

    mutating func string(_ field: String, required: Bool = false, maxLength: Int) -> String? {
        guard let value = present(field, required: required) else { return nil }
        guard case .string(let s) = value else { fail(field, "must be a string"); return nil }
        if s.isEmpty { fail(field, "must not be empty"); return nil }
        if s.utf8.count > maxLength { fail(field, "longer than \(maxLength) bytes"); return nil }
        return s
    }

    /// A string under `IdentifierText`'s rule.
    mutating func identifier(_ field: String, required: Bool = false, maxLength: Int) -> String? {
        guard let s = string(field, required: required, maxLength: maxLength) else { return nil }
        if IdentifierText.hasControlCharacter(s) { fail(field, IdentifierText.controlCharacterError); return nil }
        return s
    }

    mutating func number(_ field: String, required: Bool = false, range: ClosedRange<Double>) -> Double? {
        guard let value = present(field, required: required) else { return nil }
        guard case .number(let n) = value else { fail(field, "must be a number"); return nil }
        let d = n.doubleValue
        guard d.isFinite, range.contains(d) else {
            fail(field, "out of range (\(JSONNumber(range.lowerBound))–\(JSONNumber(range.upperBound)))")
            return nil
        }
        return d
    }

    mutating func integer(_ field: String, required: Bool = false, range: ClosedRange<Int>) -> Int? {
        guard let value = present(field, required: required) else { return nil }
        guard case .number(let n) = value, let i = n.int64Value else { fail(field, "must be an integer"); return nil }
        guard range.contains(Int(clamping: i)) else {
            fail(field, "out of range (\(range.lowerBound)–\(range.upperBound))")
            return nil
        }
        return Int(i)
    }

    mutating func enumeration<T: RawRepresentable & CaseIterable>(_ field: String, required: Bool = false) -> T?
    where T.RawValue == String {
        guard let value = present(field, required: required) else { return nil }
        guard case .string(let s) = value, let result = T(rawValue: s) else {
            fail(field, "must be one of " + T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))
            return nil
        }
        return result
    }

    static func dateValue(_ value: JSONValue) -> Double? {
        switch value {
        case .number(let n): return n.doubleValue.isFinite ? n.doubleValue : nil
        case .string(let s): return RFC3339.parse(s)
        default: return nil
        }
    }

    mutating func date(_ field: String, required: Bool = false) -> Double? {
        assert(EventValidator.dateFields.contains(field), "\(field) is not in EventValidator.dateFields")
        guard let value = present(field, required: required) else { return nil }
        guard let seconds = FieldReader.dateValue(value) else {
            fail(field, "must be an RFC 3339 date-time string or Unix seconds")
            return nil
        }
        guard seconds >= EventValidator.earliestDate, seconds < EventValidator.latestDate else {
            // Only years 0000–9999 have an RFC 3339 form, and RFC3339.format traps on numbers
            // past Int64 milliseconds (e.g. 1e300): show anything else as the number it was.
            let shown = (-62_167_219_200.0..<253_402_300_800.0).contains(seconds)
                ? RFC3339.format(seconds) : JSONNumber(seconds).description
            fail(field, "outside 2000-01-01 … 2100-01-01: \(shown)")
            return nil
        }
        dates.append((field, seconds))
        return seconds
    }

    mutating func contentObject(_ field: String, required: Bool) -> JSONText? {
        guard let value = present(field, required: required) else { return nil }
        guard case .object = value else { fail(field, "must be a JSON object"); return nil }
        let text = JSONText(value)
        let size = text.text.utf8.count
        if size > EventValidator.maxContentBytes {
            fail(field, "\(size) bytes; ActivityKit allows at most \(EventValidator.maxContentBytes)")
            return nil
        }
        texts.append((field, text))
        return text
    }

    mutating func alert(_ field: String) {
        guard let value = present(field, required: false) else { return }
        guard case .object(let alert) = value else { fail(field, "must be an object {title, body}"); return }
        for (key, part) in alert.entries {
            guard key == "title" || key == "body" else { fail("\(field).\(key)", "unknown field; alert has title and body"); continue }
            guard case .string(let s) = part, s.utf8.count <= 1024 else {
                fail("\(field).\(key)", "must be a string of at most 1024 bytes")
                continue
            }
        }
    }

    mutating func hexToken(_ field: String, required: Bool) -> String? {
        guard let token = string(field, required: required, maxLength: 1024) else { return nil }
        // Over the bytes in place where the string has them (walking the UTF-8 view cost 30
        // instructions a character).
        let isHexDigit = { (b: UInt8) in (b >= 48 && b <= 57) || (b >= 97 && b <= 102) || (b >= 65 && b <= 70) }
        let isHex = token.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isHexDigit) }
            ?? token.utf8.allSatisfy(isHexDigit)
        guard isHex, token.utf8.count >= 16, token.utf8.count % 2 == 0 else {
            fail(field, "must be a hex-encoded APNs token (an even number of 0-9a-f digits, at least 16)")
            return nil
        }
        return token
    }
}

/// A fixed set of member names, looked up by length first, then by bytes (as JSON compares
/// names). Hashing every member name into a `Set<String>` was 9% of decoding; here a name
/// meets only the few allowed names of its own length.
struct FieldNames {
    private var byLength: [[String]] = []

    init(_ names: some Sequence<String>) {
        for name in names {
            let length = name.utf8.count
            if byLength.count <= length { byLength += Array(repeating: [], count: length + 1 - byLength.count) }
            byLength[length].append(name)
        }
    }

    func contains(_ name: String) -> Bool {
        let length = name.utf8.count
        return length < byLength.count && byLength[length].contains { JSONObject.sameKey($0, name) }
    }

    /// Whether `a` and `b` are the same member name (lengths first: most names differ there).
    @inline(__always)
    static func same(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && JSONObject.sameKey(a, b)
    }
}
