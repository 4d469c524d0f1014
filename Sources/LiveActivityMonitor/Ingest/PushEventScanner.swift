import JSON

/// The fast path of `IngestDecoder` for the commonest request: a body that is one `push.sent`
/// object (a backend reporting one APNs result). It reads the bytes once and makes the same
/// `Event` as parsing into a `JSONValue` tree and validating it (`EventValidator`), stored body
/// included, without building the tree: the tree's allocations and reference counting cost as
/// much as the parsing itself.
///
/// It never reports errors. It takes only what it is sure of, and declines (nil) everything
/// else, so that the tree decoder gives the real result or the real messages:
/// - the body must be one object (blanks around and inside allowed) with only `push.sent`
///   fields, none twice;
/// - strings must be written back unchanged by `JSONWriter`: no escapes, no `<`, `>`, `&`,
///   U+2028 or U+2029 (which it escapes), valid UTF-8 (which the parser checks);
/// - numbers must be kept as their literal text by the parser (`JSONNumber`), which the writer
///   writes back as it came; exponents of at most two digits and literals of at most 64
///   characters, so that none can overflow a `Double` (which the parser refuses);
/// - integer fields (`status`, `priority`, `payload_bytes`) must be plain integers;
/// - every field must pass the validator's checks (the same constants are used).
/// Objects (`content_state`, `attributes`, `alert`) are copied without their blanks, which is
/// what the writer makes of them; nested objects are checked for duplicate names, depth and
/// sizes as the parser checks them (`JSONParser.Limits`).
///
/// The equivalence is checked member by member against the tree decoder by the tests
/// (PushEventScannerTests) and by the fuzzer (Sources/ingest-fuzzer).
struct PushEventScanner {
    /// The fields a `push.sent` may have (`EventValidator.fieldsByType` and the common ones).
    enum Field: UInt8, CaseIterable {
        // `attributes` last: its raw value + 1 is the count.
        case id, type, activityID, bookingID, attributesType, occurredAt, app
        case event, status, latencyMs, pushToken, priority, reason, apnsID, apnsUniqueID, payloadBytes
        case timestamp, contentState, staleDate, dismissalDate, relevanceScore, alert, attributes

        var name: StaticString {
            switch self {
            case .id: "id"
            case .type: "type"
            case .activityID: "activity_id"
            case .bookingID: "booking_id"
            case .attributesType: "attributes_type"
            case .occurredAt: "occurred_at"
            case .app: "app"
            case .event: "event"
            case .status: "status"
            case .latencyMs: "latency_ms"
            case .pushToken: "push_token"
            case .priority: "priority"
            case .reason: "reason"
            case .apnsID: "apns_id"
            case .apnsUniqueID: "apns_unique_id"
            case .payloadBytes: "payload_bytes"
            case .timestamp: "timestamp"
            case .contentState: "content_state"
            case .staleDate: "stale_date"
            case .dismissalDate: "dismissal_date"
            case .relevanceScore: "relevance_score"
            case .alert: "alert"
            case .attributes: "attributes"
            }
        }
    }

    /// What a member's value is, for writing the stored body.
    enum Kind: UInt8 {
        /// JSON `null`.
        case null
        /// Bytes copied as they are: a string's (quotes included) or a number's.
        case verbatim
        /// An object, copied without its blanks.
        case object
        /// A date, written as RFC 3339.
        case date
        /// The push token, written as its fingerprint under `token_fingerprint`.
        case token
    }

    /// One member of the event object, in body order.
    struct Member {
        var field: Field
        var kind: Kind
        /// The value's bytes in the body (a string's with its quotes).
        var start: Int
        var end: Int
        /// Whether an object value has blanks to leave out.
        var hasBlanks: Bool
        /// A date's Unix seconds.
        var seconds: Double
    }

    /// The values the event keeps, as read so far.
    struct Values {
        var key: String?
        var typeSeen = false
        var kind: PushKind?
        var activityID: String?
        var bookingID: String?
        var attributesType: String?
        var app: String?
        var reason: String?
        var occurredAt: Double?
        var timestamp: Double?
        var staleDate: Double?
        var dismissalDate: Double?
        var relevanceScore: Double?
        var status: Int?
        var latencyMs: Double?
        var priority = 10
        var payloadBytes: Int?
        var token: Range<Int>?
    }

    /// Member names of the nested objects being read, for the duplicate check the parser makes.
    struct Name {
        var start: Int
        var count: Int
    }

    /// Nested member names held at once; an event with more declines (content is at most 4 KB).
    static let maxNestedNames = 128
    /// Containers open at once, whatever the limits say: the nested reader recurses.
    static let maxOpen = 32
    /// Numbers longer than this decline: shorter ones with an exponent of at most two digits
    /// are always finite as `Double`s, so the parser takes them.
    static let maxNumberLength = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    /// The same bytes, as the JSON grammar reads them.
    private let raw: UnsafeRawBufferPointer
    private let limits: JSONParser.Limits
    private let names: UnsafeMutableBufferPointer<Name>
    private var nameCount = 0
    /// Current position.
    private var i = 0
    /// Containers open (the event object is the first).
    private var open = 0
    /// Blanks skipped so far (inside objects they are left out of the written form).
    private var blanks = 0

    private init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONParser.Limits, names: UnsafeMutableBufferPointer<Name>) {
        self.bytes = bytes
        self.raw = UnsafeRawBufferPointer(bytes)
        self.limits = limits
        self.names = names
    }

    /// The event `body` holds, or nil when the fast path is not sure (see the type's comment).
    static func event(in body: ArraySlice<UInt8>, limits: JSONParser.Limits) -> Event? {
        body.withUnsafeBufferPointer { bytes in
            guard mentionsPushSent(bytes) else { return nil }
            return withUnsafeTemporaryAllocation(of: Member.self, capacity: Int(Field.attributes.rawValue) + 1) { members in
                withUnsafeTemporaryAllocation(of: Name.self, capacity: maxNestedNames) { names in
                    var scanner = PushEventScanner(bytes: bytes, limits: limits, names: names)
                    return scanner.scan(members)
                }
            }
        }
    }

    /// Whether `"push.sent"` occurs in the body, as it must in any body the fast path takes
    /// (the type is read as these very bytes). Other single objects are declined at once:
    /// with `type` last (as the reporter's sorted keys put it) an `activity.updated` would
    /// otherwise be scanned whole before being declined, which cost a sixth more than
    /// decoding it. Clients that put `type` first pay a few bytes' search.
    static func mentionsPushSent(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let pattern: StaticString = "\"push.sent\""
        let length = pattern.utf8CodeUnitCount
        guard bytes.count >= length, let base = bytes.baseAddress else { return false }
        // Horspool: the byte under the pattern's last position says how far it can move; in
        // JSON text mostly 10 or 11 bytes, so a body is searched in a few dozen steps.
        func shift(_ byte: UInt8) -> Int {
            switch byte {
            case UInt8(ascii: "\""): 10
            case UInt8(ascii: "p"): 9
            case UInt8(ascii: "u"): 8
            case UInt8(ascii: "h"): 6
            case UInt8(ascii: "."): 5
            case UInt8(ascii: "s"): 4
            case UInt8(ascii: "e"): 3
            case UInt8(ascii: "n"): 2
            case UInt8(ascii: "t"): 1
            default: 11
            }
        }
        var p = 0
        while p + length <= bytes.count {
            let last = base[p + length - 1]
            if last == UInt8(ascii: "\""), sameBytes(base + p, pattern.utf8Start, length) { return true }
            p += shift(last)
        }
        return false
    }

    // MARK: The event object

    private mutating func scan(_ members: UnsafeMutableBufferPointer<Member>) -> Event? {
        var values = Values()
        var count = 0
        var seen: UInt32 = 0
        skipBlanks()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{"), open < limits.maxDepth else { return nil }
        i += 1
        open = 1
        skipBlanks()
        while true {
            // A member name: one of the fields, not seen before (the parser refuses duplicates).
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let name = string(),
                  let field = Self.field(bytes, name), seen & (1 << field.rawValue) == 0
            else { return nil }
            seen |= 1 << field.rawValue
            skipBlanks()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            skipBlanks()
            guard let member = value(of: field, into: &values) else { return nil }
            members[count] = member
            count += 1
            skipBlanks()
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                skipBlanks()
                continue
            }
            guard bytes[i] == UInt8(ascii: "}") else { return nil }
            i += 1
            break
        }
        skipBlanks()
        guard i == bytes.count, count <= limits.maxContainerCount else { return nil }

        // What the validator requires (each field's own checks were made as it was read).
        guard values.typeSeen, let kind = values.kind, let occurredAt = values.occurredAt,
              let status = values.status, let latencyMs = values.latencyMs, let token = values.token
        else { return nil }
        let isPushStart = kind == .start
        if !isPushStart, values.activityID == nil { return nil }
        if isPushStart, values.bookingID == nil { return nil }

        var event = Event(type: .pushSent, occurredAt: occurredAt)
        event.key = values.key
        event.activityID = values.activityID
        event.bookingID = values.bookingID
        event.attributesType = values.attributesType
        event.app = values.app
        event.staleDate = values.staleDate
        event.dismissalDate = values.dismissalDate
        event.relevanceScore = values.relevanceScore
        event.timestamp = values.timestamp ?? occurredAt
        event.push = PushResult(kind: kind, status: status, reason: values.reason, latencyMs: latencyMs,
                                priority: values.priority, payloadBytes: values.payloadBytes)
        let fingerprint = TokenFingerprint.of(utf8: UnsafeBufferPointer(rebasing: bytes[token]))
        event.tokenFingerprint = fingerprint
        guard let body = storedBody(UnsafeBufferPointer(rebasing: members[0..<count]), fingerprint: fingerprint,
                                    event: &event)
        else { return nil }
        event.body = body
        return event
    }

    /// Reads the value of `field` at `i`, checking it as `EventValidator` does.
    private mutating func value(of field: Field, into values: inout Values) -> Member? {
        guard i < bytes.count else { return nil }
        let start = i
        var member = Member(field: field, kind: .verbatim, start: start, end: start, hasBlanks: false, seconds: 0)
        if bytes[i] == UInt8(ascii: "n") {
            // null reads as absent: fine for optional fields (nothing to set), required ones
            // are checked at the end. The stored body keeps it (booking_id aside).
            guard literal("null"), field != .type else { return nil }
            member.kind = .null
            member.end = i
            return member
        }
        switch field {
        case .type:
            guard let text = string(), Self.equals(bytes, text, "push.sent") else { return nil }
            values.typeSeen = true
        case .event:
            guard let text = string() else { return nil }
            if Self.equals(bytes, text, "update") {
                values.kind = .update
            } else if Self.equals(bytes, text, "start") {
                values.kind = .start
            } else if Self.equals(bytes, text, "end") {
                values.kind = .end
            } else {
                return nil
            }
        case .id, .activityID, .bookingID, .attributesType:
            guard let text = identifier(maxLength: EventValidator.maxIDLength) else { return nil }
            let value = String(decoding: UnsafeBufferPointer(rebasing: bytes[text]), as: UTF8.self)
            switch field {
            case .id: values.key = value
            case .activityID: values.activityID = value
            case .bookingID: values.bookingID = value
            default: values.attributesType = value
            }
        case .app:
            guard let text = identifier(maxLength: 255) else { return nil }
            values.app = String(decoding: UnsafeBufferPointer(rebasing: bytes[text]), as: UTF8.self)
        case .reason:
            guard let text = identifier(maxLength: 64) else { return nil }
            values.reason = String(decoding: UnsafeBufferPointer(rebasing: bytes[text]), as: UTF8.self)
        case .apnsID, .apnsUniqueID:
            guard identifier(maxLength: 64) != nil else { return nil }
        case .occurredAt, .timestamp, .staleDate, .dismissalDate:
            guard let seconds = date() else { return nil }
            member.kind = .date
            member.seconds = seconds
            switch field {
            case .occurredAt: values.occurredAt = seconds
            case .timestamp: values.timestamp = seconds
            case .staleDate: values.staleDate = seconds
            default: values.dismissalDate = seconds
            }
        case .status:
            // 0 (no answer) or an HTTP status.
            guard let status = integer(), status == 0 || (100...599).contains(status) else { return nil }
            values.status = status
        case .priority:
            guard let priority = integer(), priority == 5 || priority == 10 else { return nil }
            values.priority = priority
        case .payloadBytes:
            guard let size = integer(), (0...1_048_576).contains(size) else { return nil }
            values.payloadBytes = size
        case .latencyMs:
            guard let latency = double(), (0...3_600_000).contains(latency) else { return nil }
            values.latencyMs = latency
        case .relevanceScore:
            guard let score = double(), (-1e9...1e9).contains(score) else { return nil }
            values.relevanceScore = score
        case .pushToken:
            // A hex-encoded APNs token (FieldReader.hexToken): an even number of hex digits, 16 to 1024.
            guard let text = string(maxLength: 1024), text.count >= 16, text.count % 2 == 0 else { return nil }
            for p in text where !Self.isHexDigit(bytes[p]) { return nil }
            values.token = text
            member.kind = .token
        case .contentState, .attributes:
            guard bytes[i] == UInt8(ascii: "{") else { return nil }
            let blanksBefore = blanks
            guard object() else { return nil }
            let skipped = blanks - blanksBefore
            // ActivityKit's limit, on the text as written (FieldReader.contentObject).
            guard i - start - skipped <= EventSchema.maxContentBytes else { return nil }
            member.kind = .object
            member.hasBlanks = skipped > 0
        case .alert:
            let blanksBefore = blanks
            guard alert() else { return nil }
            member.kind = .object
            member.hasBlanks = blanks > blanksBefore
        }
        member.end = i
        return member
    }

    /// The field a member name names, or nil for any other name: by length first, as most
    /// names differ there.
    private static func field(_ bytes: UnsafeBufferPointer<UInt8>, _ name: Range<Int>) -> Field? {
        func named(_ field: Field) -> Field? { equals(bytes, name, field.name) ? field : nil }
        switch name.count {
        case 2: return named(.id)
        case 3: return named(.app)
        case 4: return named(.type)
        case 5: return named(.event) ?? named(.alert)
        case 6: return named(.status) ?? named(.reason)
        case 7: return named(.apnsID)
        case 8: return named(.priority)
        case 9: return named(.timestamp)
        case 10: return named(.pushToken) ?? named(.latencyMs) ?? named(.bookingID) ?? named(.staleDate) ?? named(.attributes)
        case 11: return named(.activityID) ?? named(.occurredAt)
        case 13: return named(.contentState) ?? named(.payloadBytes)
        case 14: return named(.apnsUniqueID) ?? named(.dismissalDate)
        case 15: return named(.attributesType) ?? named(.relevanceScore)
        default: return nil
        }
    }

    // MARK: Field values

    /// A string of 1 to `maxLength` bytes (`FieldReader.string`), without its quotes.
    private mutating func string(maxLength: Int) -> Range<Int>? {
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let text = string(),
              !text.isEmpty, text.count <= maxLength
        else { return nil }
        return text
    }

    /// A plain integer literal (no fraction or exponent: others decline) of at most 18 digits.
    private mutating func integer() -> Int? {
        guard let literal = number(), literal.isInteger else { return nil }
        return JSONGrammar.plainInteger(raw, from: literal.range.lowerBound, to: literal.range.upperBound)
    }

    /// A number's value, exactly as `JSONNumber.doubleValue` reads its literal (both are
    /// `JSONGrammar.doubleValue`).
    private mutating func double() -> Double? {
        guard let literal = number() else { return nil }
        return JSONGrammar.doubleValue(raw, from: literal.range.lowerBound, to: literal.range.upperBound)
    }

    /// A date (`FieldReader.date`): RFC 3339 text or Unix seconds, inside the validator's window.
    private mutating func date() -> Double? {
        guard i < bytes.count else { return nil }
        let seconds: Double?
        if bytes[i] == UInt8(ascii: "\"") {
            guard let text = string() else { return nil }
            seconds = RFC3339.parse(String(decoding: UnsafeBufferPointer(rebasing: bytes[text]), as: UTF8.self))
        } else {
            seconds = double()
        }
        guard let seconds, EventSchema.dateWindow.contains(seconds) else { return nil }
        return seconds
    }

    /// `alert` (`FieldReader.alert`): an object with at most `title` and `body`, strings of at
    /// most 1024 bytes.
    private mutating func alert() -> Bool {
        guard bytes[i] == UInt8(ascii: "{"), open < limits.maxDepth else { return false }
        i += 1
        skipBlanks()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            return true
        }
        var title = false, body = false, count = 0
        while true {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let name = string() else { return false }
            if Self.equals(bytes, name, "title"), !title {
                title = true
            } else if Self.equals(bytes, name, "body"), !body {
                body = true
            } else {
                return false
            }
            count += 1
            skipBlanks()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return false }
            i += 1
            skipBlanks()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let text = string(), text.count <= 1024 else { return false }
            skipBlanks()
            guard i < bytes.count else { return false }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                skipBlanks()
                continue
            }
            guard bytes[i] == UInt8(ascii: "}") else { return false }
            i += 1
            return count <= limits.maxContainerCount
        }
    }

    /// An identifier (`FieldReader.identifier`): a string without control characters; one
    /// with any declines, so that the general path names the error.
    private mutating func identifier(maxLength: Int) -> Range<Int>? {
        guard let text = string(maxLength: maxLength),
              !IdentifierText.hasControlCharacter(UnsafeBufferPointer(rebasing: bytes[text]))
        else { return nil }
        return text
    }

    // MARK: JSON grammar

    /// At an opening quote: the string's bytes (between the quotes) when `JSONWriter` writes it
    /// back unchanged and the parser takes it; nil for anything else (escapes included).
    private mutating func string() -> Range<Int>? {
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return nil }
        let start = i + 1
        // Up to the first byte that is not plain for the writer: a quote, a backslash, a
        // control character, `&`, `<` or `>`. Only a quote (the string's end) is taken.
        let (p, nonASCII) = JSONGrammar.plainRun(raw, from: start, to: bytes.count, stops: .writer)
        guard p < bytes.count, bytes[p] == UInt8(ascii: "\""), p - start <= limits.maxStringBytes else { return nil }
        if nonASCII, !JSONGrammar.isVerbatimUTF8(raw, from: start, to: p) { return nil }
        i = p + 1
        return start..<p
    }

    /// At `-` or a digit: a number literal in RFC 8259's grammar that the parser keeps as it is
    /// and that is surely finite (see `maxNumberLength`).
    private mutating func number() -> (range: Range<Int>, isInteger: Bool)? {
        guard case .success(let literal) = JSONGrammar.numberLiteral(raw, from: i, to: bytes.count),
              literal.exponentDigits <= 2, literal.end - i <= min(limits.maxNumberLength, Self.maxNumberLength)
        else { return nil }
        defer { i = literal.end }
        return (i..<literal.end, literal.isPlainInteger)
    }

    /// At `word`'s first byte: reads it whole.
    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard i + count <= bytes.count, Self.equals(bytes, i..<(i + count), word) else { return false }
        i += count
        return true
    }

    /// At `{`: a whole object of any JSON values, which the parser takes (depth, sizes,
    /// duplicate names) and the writer writes back as it is, blanks aside.
    private mutating func object() -> Bool {
        guard open < min(limits.maxDepth, Self.maxOpen) else { return false }
        open += 1
        i += 1
        skipBlanks()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            open -= 1
            return true
        }
        let firstName = nameCount
        var count = 0
        while true {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let name = string() else { return false }
            // Names compare by their bytes, as the parser compares them (no escapes here).
            for k in firstName..<nameCount where names[k].count == name.count
                && Self.equals(bytes, names[k].start, name.lowerBound, name.count) {
                return false
            }
            guard nameCount < names.count else { return false }
            names[nameCount] = Name(start: name.lowerBound, count: name.count)
            nameCount += 1
            skipBlanks()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return false }
            i += 1
            skipBlanks()
            guard nestedValue() else { return false }
            count += 1
            guard count <= limits.maxContainerCount else { return false }
            skipBlanks()
            guard i < bytes.count else { return false }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                skipBlanks()
                continue
            }
            guard bytes[i] == UInt8(ascii: "}") else { return false }
            i += 1
            break
        }
        nameCount = firstName
        open -= 1
        return true
    }

    /// At `[`: a whole array, as `object()` takes objects.
    private mutating func array() -> Bool {
        guard open < min(limits.maxDepth, Self.maxOpen) else { return false }
        open += 1
        i += 1
        skipBlanks()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
            open -= 1
            return true
        }
        var count = 0
        while true {
            guard nestedValue() else { return false }
            count += 1
            guard count <= limits.maxContainerCount else { return false }
            skipBlanks()
            guard i < bytes.count else { return false }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                skipBlanks()
                continue
            }
            guard bytes[i] == UInt8(ascii: "]") else { return false }
            i += 1
            break
        }
        open -= 1
        return true
    }

    /// Any value inside `content_state` or `attributes`.
    private mutating func nestedValue() -> Bool {
        guard i < bytes.count else { return false }
        switch bytes[i] {
        case UInt8(ascii: "\""): return string() != nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number() != nil
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return false
        }
    }

    /// Skips JSON's four blanks, counting them.
    @inline(__always)
    private mutating func skipBlanks() {
        while i < bytes.count, JSONGrammar.isWhitespace(bytes[i]) {
            i += 1
            blanks += 1
        }
    }

    @inline(__always)
    private static func isHexDigit(_ byte: UInt8) -> Bool {
        JSONGrammar.isDigit(byte) || (byte | 0x20) &- UInt8(ascii: "a") < 6
    }

    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ word: StaticString) -> Bool {
        range.count == word.utf8CodeUnitCount
            && sameBytes(bytes.baseAddress! + range.lowerBound, word.utf8Start, range.count)
    }

    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ a: Int, _ b: Int, _ count: Int) -> Bool {
        sameBytes(bytes.baseAddress! + a, bytes.baseAddress! + b, count)
    }

    @inline(__always)
    private static func sameBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        JSONGrammar.sameBytes(a, b, count: count)
    }

    // MARK: The stored body

    /// The body's bytes as they are written, straight into the string's storage.
    struct Output {
        let base: UnsafeMutablePointer<UInt8>
        let capacity: Int
        var count = 0
        /// Set if the capacity was too small (never, by the bound in `storedBody`): then decline.
        var overflow = false
        /// Where the content objects were written.
        var contentState: Range<Int>?
        var attributes: Range<Int>?

        @inline(__always)
        mutating func put(_ source: UnsafeBufferPointer<UInt8>) {
            guard count + source.count <= capacity else { overflow = true; return }
            if let from = source.baseAddress { (base + count).initialize(from: from, count: source.count) }
            count += source.count
        }

        @inline(__always)
        mutating func put(_ text: StaticString) {
            put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }

        @inline(__always)
        mutating func put(_ byte: UInt8) {
            guard count < capacity else { overflow = true; return }
            base[count] = byte
            count += 1
        }

        mutating func put(quoted text: String) {
            var text = text
            put(UInt8(ascii: "\""))
            text.withUTF8 { put($0) }
            put(UInt8(ascii: "\""))
        }
    }

    /// What `EventValidator.storedBody` writes, from the members in body order: dates as RFC
    /// 3339, the token as `token_fingerprint`, a null `booking_id` left out, objects without
    /// blanks, everything else as it came. Sets the event's content texts on the way.
    private func storedBody(_ members: UnsafeBufferPointer<Member>, fingerprint: String, event: inout Event) -> String? {
        // Only dates (at most 26 bytes with their quotes, for a value of at least 3) and the
        // token's name (7 bytes longer; its value is no longer than the token) grow: the input's
        // size plus this is always enough.
        let capacity = bytes.count + 4 * 26 + 16
        var contentState: Range<Int>?, attributes: Range<Int>?
        var body = String(unsafeUninitializedCapacity: capacity) { buffer in
            var out = Output(base: buffer.baseAddress!, capacity: buffer.count)
            write(members, fingerprint: fingerprint, to: &out)
            contentState = out.contentState
            attributes = out.attributes
            return out.overflow ? 0 : out.count
        }
        guard !body.isEmpty else { return nil }
        // The content objects as the body has them (the text `JSONText(value)` would write).
        body.withUTF8 { utf8 in
            event.contentState = contentState.map { JSONText(written: String(decoding: UnsafeBufferPointer(rebasing: utf8[$0]), as: UTF8.self)) }
            event.attributes = attributes.map { JSONText(written: String(decoding: UnsafeBufferPointer(rebasing: utf8[$0]), as: UTF8.self)) }
        }
        return body
    }

    private func write(_ members: UnsafeBufferPointer<Member>, fingerprint: String, to out: inout Output) {
        out.put(UInt8(ascii: "{"))
        var first = true
        // occurred_at and timestamp are often the same time: formatted once.
        var lastDate: (seconds: Double, text: String)?
        for member in members {
            if member.field == .bookingID, member.kind == .null { continue }
            if !first { out.put(UInt8(ascii: ",")) }
            first = false
            out.put(UInt8(ascii: "\""))
            out.put(member.kind == .token ? "token_fingerprint" : member.field.name)
            out.put("\":")
            switch member.kind {
            case .null:
                out.put("null")
            case .verbatim:
                out.put(UnsafeBufferPointer(rebasing: bytes[member.start..<member.end]))
            case .date:
                let text: String
                if let lastDate, lastDate.seconds == member.seconds {
                    text = lastDate.text
                } else {
                    text = RFC3339.format(member.seconds)
                    lastDate = (member.seconds, text)
                }
                out.put(quoted: text)
            case .token:
                out.put(quoted: fingerprint)
            case .object:
                let start = out.count
                if member.hasBlanks {
                    // Blanks are left out outside strings (which hold no quote but their own).
                    var inString = false
                    for p in member.start..<member.end {
                        let byte = bytes[p]
                        if byte == UInt8(ascii: "\"") {
                            inString.toggle()
                        } else if !inString, JSONGrammar.isWhitespace(byte) {
                            continue
                        }
                        out.put(byte)
                    }
                } else {
                    out.put(UnsafeBufferPointer(rebasing: bytes[member.start..<member.end]))
                }
                if member.field == .contentState {
                    out.contentState = start..<out.count
                } else if member.field == .attributes {
                    out.attributes = start..<out.count
                }
            }
        }
        out.put(UInt8(ascii: "}"))
    }
}
