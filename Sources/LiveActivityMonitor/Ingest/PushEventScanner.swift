import JSON
import LiveActivityWire

/// The fast path of `IngestDecoder` for the commonest request: a body that is one `push.sent`
/// object (a backend reporting one APNs result). It reads the bytes once and makes the same
/// `Event` as parsing into a `JSONValue` tree and validating it (`EventValidator`), stored body
/// included, without building the tree: the tree's allocations and reference counting cost as
/// much as the parsing itself.
///
/// Both read the same schema (`EventSchema`): the scanner compiles its `push.sent` rows once
/// (`Rules`) and checks each member by its row's kind and limits; it builds the event with the
/// validator's `Event.assembled(_:from:body:)` and writes the stored body by the rows' stored
/// forms. The JSON grammar is `JSONGrammar`'s, the parser's own.
///
/// It never reports errors. It takes only what it is sure of, and declines (nil) everything
/// else, so that the tree decoder gives the real result or the real messages:
/// - the body must be one object (blanks around and inside allowed) with only fields the
///   schema allows on `push.sent`, none twice, and every field it requires;
/// - strings must be written back unchanged by `JSONWriter`: no escapes, no `<`, `>`, `&`,
///   U+2028 or U+2029 (which it escapes), valid UTF-8 (which the parser checks);
/// - numbers must be kept as their literal text by the parser (`JSONNumber`), which the writer
///   writes back as it came; exponents of at most two digits and literals of at most 64
///   characters, so that none can overflow a `Double` (which the parser refuses);
/// - integer fields must be plain integers;
/// - every field must pass its row's checks; a row it cannot check in one pass (a value that
///   requires another field) declines.
/// Objects (`content_state`, `attributes`, `alert`) are copied without their blanks, which is
/// what the writer makes of them; nested objects are checked for duplicate names, depth and
/// sizes as the parser checks them (`JSONParser.Limits`).
///
/// The equivalence is checked member by member against the tree decoder by the tests
/// (PushEventScannerTests) and by the fuzzer (Sources/ingest-fuzzer).
struct PushEventScanner {
    /// One schema row as the scanner checks it: plain values (no reference counting), so that
    /// reading one costs an index.
    struct Rule {
        enum Kind: UInt8 {
            /// Not a `push.sent` field: the body declines.
            case notAllowed
            /// A row the scanner does not check in one pass: declines.
            case unsupported
            case type, choice, identifier, date, number, integer, token, content, alert
        }

        var kind: Kind = .notAllowed
        var name: StaticString = ""
        var stored: FieldSpec.StoredForm = .asIs
        /// Identifiers, content objects, alert parts: the longest value in bytes.
        var maxLength = 0
        var number: ClosedRange<Double> = 0...0
        /// A date's window.
        var dates: Range<Double> = 0..<0
        var integer = FieldSpec.IntegerBounds(range: 0...0, refused: nil)
        var token = FieldSpec.HexToken(minLength: 0, maxLength: 0, storedName: "")
        /// An enumeration's values: `Rules.choices[choices]`.
        var choices: Range<Int> = 0..<0
    }

    /// The schema's rows for `push.sent`, compiled once.
    ///
    /// `@unchecked Sendable`: written once, in `init`, and only read afterwards. The rules are
    /// in a buffer rather than an array so that reading one field of a rule is a load, with no
    /// copy of the rule and no reference counting.
    final class Rules: @unchecked Sendable {
        /// By `EventField` raw value.
        let byField: UnsafeMutableBufferPointer<Rule>
        let lookup: FieldLookup
        /// The fields a push-to-start requires, and an update or end, as bits.
        let requiredToStart: UInt64
        let requiredOtherwise: UInt64
        /// The enumerations' values, each as its bytes.
        let choices: [[UInt8]]
        /// The position of `start` among `event`'s values.
        let startChoice: Int
        /// The type's value, `push.sent`.
        let typeValue: [UInt8]
        /// The same with its quotes, and the Horspool shifts to find it.
        let pattern: [UInt8]
        let shifts: [UInt8]
        /// The token field (one is required).
        let tokenField: EventField
        /// How much longer than the body its stored form may be: dates written as RFC 3339
        /// (at most 26 bytes with their quotes), the token's longer name.
        let growth: Int

        init() {
            var byField: [Rule] = []
            var choices: [[UInt8]] = []
            var tokenField: EventField?
            var growth = 0
            for row in EventSchema.fields {
                var rule = Rule()
                rule.name = row.name
                rule.stored = row.storedForm
                defer { byField.append(rule) }
                guard row.allowed.isSuperset(of: .pushSent) else {
                    rule.kind = row.allowed.isDisjoint(with: .pushSent) ? .notAllowed : .unsupported
                    continue
                }
                switch row.kind {
                case .eventType:
                    rule.kind = .type
                case .enumeration(let enumeration):
                    rule.kind = enumeration.requiring == nil ? .choice : .unsupported
                    rule.choices = choices.count..<(choices.count + enumeration.values.count)
                    choices += enumeration.values.map { Array($0.utf8) }
                case .identifier(let maxLength):
                    rule.kind = .identifier
                    rule.maxLength = maxLength
                case .date(let window):
                    rule.kind = .date
                    rule.dates = window
                    growth += 26
                case .number(let range):
                    rule.kind = .number
                    rule.number = range
                case .integer(let integer):
                    rule.kind = .integer
                    rule.integer = integer.bounds
                case .content(let maxBytes):
                    rule.kind = .content
                    rule.maxLength = maxBytes
                case .alert(let maxLength):
                    rule.kind = .alert
                    rule.maxLength = maxLength
                case .token(let token):
                    // One token field: the event keeps one fingerprint.
                    rule.kind = tokenField == nil ? .token : .unsupported
                    rule.token = token
                    tokenField = tokenField ?? row.field
                    growth += max(0, token.storedName.utf8CodeUnitCount - row.name.utf8CodeUnitCount)
                }
                // A broadcast (`channel_id`) is another kind of push.sent, with other requirements:
                // the general path reads it.
                if row.field == .channelID { rule.kind = .unsupported }
                // A row checked only once another field is valid is the same here only if that
                // field is always there.
                if case .withValid(let other) = row.checked, !other.spec.required.isSuperset(of: .pushSent) {
                    rule.kind = .unsupported
                }
            }
            self.byField = .allocate(capacity: byField.count)
            _ = self.byField.initialize(from: byField)
            self.choices = choices
            lookup = EventSchema.lookup
            requiredToStart = EventSchema.fields.reduce(0) { $1.required.contains(.pushToStart) ? $0 | $1.field.bit : $0 }
            requiredOtherwise = EventSchema.fields.reduce(0) { $1.required.contains(.pushUpdateOrEnd) ? $0 | $1.field.bit : $0 }
            let event = byField[Int(EventField.event.rawValue)]
            startChoice = event.choices.first { choices[$0] == Array(PushKind.start.rawValue.utf8) } ?? -1
            precondition(event.kind == .choice && startChoice >= 0, "push.sent's event is an enumeration with start")
            precondition(tokenField != nil, "push.sent has a token")
            self.tokenField = tokenField ?? .pushToken
            self.growth = growth + 16
            typeValue = Array(EventType.pushSent.rawValue.utf8)
            pattern = [UInt8(ascii: "\"")] + typeValue + [UInt8(ascii: "\"")]
            // Horspool: how far the pattern may move when this byte is under its last position.
            var shifts = [UInt8](repeating: UInt8(pattern.count), count: 256)
            for (position, byte) in pattern.dropLast().enumerated() { shifts[Int(byte)] = UInt8(pattern.count - 1 - position) }
            self.shifts = shifts
        }

        deinit { byField.deallocate() }
    }

    static let rules = Rules()

    /// One member of the event object, as read. Small (32 bytes), so that a member per field
    /// stays on the stack (`withUnsafeTemporaryAllocation` takes the heap above 1 KiB).
    struct Member {
        /// The value's bytes in the body (a string's with its quotes).
        private var start: Int32
        private var end: Int32
        /// Where the stored body has an object value.
        private var writtenStart: Int32 = 0
        private var writtenEnd: Int32 = 0
        /// A number's value or a date's Unix seconds, or an integer's value or the position of
        /// an enumeration's value: a field has one of them.
        private var bits: UInt64 = 0
        /// How the stored body writes it.
        var form: Form
        /// Whether an object value has blanks to leave out.
        var hasBlanks = false

        init(form: Form, at start: Int) {
            self.form = form
            self.start = Int32(truncatingIfNeeded: start)
            self.end = self.start
        }

        var range: Range<Int> {
            get { Int(start)..<Int(end) }
            set { start = Int32(truncatingIfNeeded: newValue.lowerBound); end = Int32(truncatingIfNeeded: newValue.upperBound) }
        }

        var written: Range<Int> {
            get { Int(writtenStart)..<Int(writtenEnd) }
            set {
                writtenStart = Int32(truncatingIfNeeded: newValue.lowerBound)
                writtenEnd = Int32(truncatingIfNeeded: newValue.upperBound)
            }
        }

        var number: Double {
            get { Double(bitPattern: bits) }
            set { bits = newValue.bitPattern }
        }

        var integer: Int {
            get { Int(Int64(bitPattern: bits)) }
            set { bits = UInt64(bitPattern: Int64(newValue)) }
        }
    }

    /// What a member's value is, for writing the stored body.
    enum Form: UInt8 {
        /// JSON `null`.
        case null
        /// Bytes copied as they are: a string's (quotes included) or a number's.
        case verbatim
        /// An object, copied without its blanks.
        case object
        /// A date, written as RFC 3339.
        case date
        /// The push token, written as its fingerprint under its stored name.
        case token
    }

    /// Member names of the nested objects being read, for the duplicate check the parser makes.
    /// `Int32`s (places in a body the scanner takes, `event(in:limits:)`), so that
    /// `maxNestedNames` of them fit the 1 KiB `withUnsafeTemporaryAllocation` keeps on the stack.
    struct Name {
        var start: Int32
        var count: Int32
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
    private let rules: Rules
    private let names: UnsafeMutableBufferPointer<Name>
    private var nameCount = 0
    /// Current position.
    private var i = 0
    /// Containers open (the event object is the first).
    private var open = 0
    /// Blanks skipped so far (inside objects they are left out of the written form).
    private var blanks = 0

    private init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONParser.Limits, rules: Rules,
                 names: UnsafeMutableBufferPointer<Name>) {
        self.bytes = bytes
        self.raw = UnsafeRawBufferPointer(bytes)
        self.limits = limits
        self.rules = rules
        self.names = names
    }

    /// The event `body` holds, or nil when the fast path is not sure (see the type's comment).
    static func event(in body: ArraySlice<UInt8>, limits: JSONParser.Limits) -> Event? {
        let rules = Self.rules
        return body.withUnsafeBufferPointer { bytes in
            // Places in the body are kept as `Int32`s (`Member`).
            guard bytes.count < Int(Int32.max), mentionsPushSent(bytes, rules) else { return nil }
            let fields = EventField.allCases.count
            return withUnsafeTemporaryAllocation(of: Member.self, capacity: fields) { members in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: fields) { order in
                    withUnsafeTemporaryAllocation(of: Name.self, capacity: maxNestedNames) { names in
                        var scanner = PushEventScanner(bytes: bytes, limits: limits, rules: rules, names: names)
                        return scanner.scan(members, order: order)
                    }
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
        mentionsPushSent(bytes, rules)
    }

    private static func mentionsPushSent(_ bytes: UnsafeBufferPointer<UInt8>, _ rules: Rules) -> Bool {
        rules.pattern.withUnsafeBufferPointer { pattern in
            rules.shifts.withUnsafeBufferPointer { shifts in
                let length = pattern.count
                guard bytes.count >= length, let base = bytes.baseAddress, let first = pattern.baseAddress else { return false }
                // Horspool: the byte under the pattern's last position says how far it can move;
                // in JSON text mostly 10 or 11 bytes, so a body is searched in a few dozen steps.
                let closing = pattern[length - 1]
                var p = 0
                while p + length <= bytes.count {
                    let last = base[p + length - 1]
                    if last == closing, JSONGrammar.sameBytes(base + p, first, count: length) { return true }
                    p += Int(shifts[Int(last)])
                }
                return false
            }
        }
    }

    // MARK: The event object

    private mutating func scan(_ members: UnsafeMutableBufferPointer<Member>, order: UnsafeMutableBufferPointer<UInt8>) -> Event? {
        var count = 0
        var seen: UInt64 = 0
        var present: UInt64 = 0
        skipBlanks()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{"), open < limits.maxDepth else { return nil }
        i += 1
        open = 1
        skipBlanks()
        while true {
            // A member name: a field of push.sent, not seen before (the parser refuses duplicates).
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let name = string(),
                  let field = rules.lookup.field(UnsafeRawBufferPointer(rebasing: raw[name])), seen & field.bit == 0
            else { return nil }
            seen |= field.bit
            skipBlanks()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            skipBlanks()
            guard let member = value(rules.byField.baseAddress! + Int(field.rawValue)) else { return nil }
            members[Int(field.rawValue)] = member
            order[count] = field.rawValue
            count += 1
            if member.form != .null { present |= field.bit }
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

        // What the schema requires (each field's own checks were made as it was read); which
        // push this is decides it.
        guard present & EventField.event.bit != 0 else { return nil }
        let required = members[Int(EventField.event.rawValue)].integer == rules.startChoice
            ? rules.requiredToStart : rules.requiredOtherwise
        guard required & ~present == 0 else { return nil }

        // A start push may name its token in another field, which this path does not read.
        guard present & rules.tokenField.bit != 0 else { return nil }
        let token = members[Int(rules.tokenField.rawValue)]
        let fingerprint = TokenFingerprint.of(utf8: UnsafeBufferPointer(rebasing: bytes[(token.range.lowerBound + 1)..<(token.range.upperBound - 1)]))
        guard let body = storedBody(UnsafeBufferPointer(rebasing: order[0..<count]), members, fingerprint: fingerprint)
        else { return nil }
        let fields = ScannedFields(bytes: bytes, members: members, present: present, body: body,
                                   tokenField: rules.tokenField, fingerprint: fingerprint)
        return Event.assembled(.pushSent, from: fields, body: body)
    }

    /// Reads the value at `i` of the field whose rule is `rule`, as `EventValidator` checks it.
    private mutating func value(_ rule: UnsafePointer<Rule>) -> Member? {
        guard i < bytes.count else { return nil }
        let start = i
        var member = Member(form: .verbatim, at: start)
        let kind = rule.pointee.kind
        if bytes[i] == UInt8(ascii: "n") {
            // null reads as absent: fine for optional fields, required ones are checked at the
            // end. The stored body keeps it (unless its row leaves it out).
            guard literal("null"), kind != .notAllowed, kind != .unsupported else { return nil }
            member.form = .null
            member.range = start..<i
            return member
        }
        switch kind {
        case .notAllowed, .unsupported:
            return nil
        case .type:
            guard let text = string(), Self.equals(bytes, text, rules.typeValue) else { return nil }
        case .choice:
            guard let text = string(),
                  let choice = rule.pointee.choices.first(where: { Self.equals(bytes, text, rules.choices[$0]) })
            else { return nil }
            member.integer = choice - rule.pointee.choices.lowerBound
        case .identifier:
            guard let text = string(maxLength: rule.pointee.maxLength),
                  !IdentifierText.hasControlCharacter(UnsafeBufferPointer(rebasing: bytes[text]))
            else { return nil }
        case .date:
            guard let seconds = date(in: rule.pointee.dates) else { return nil }
            member.form = .date
            member.number = seconds
        case .integer:
            guard let integer = integer(), rule.pointee.integer.accepts(integer) else { return nil }
            member.integer = integer
        case .number:
            guard let number = double(), rule.pointee.number.contains(number) else { return nil }
            member.number = number
        case .token:
            guard let text = string(maxLength: rule.pointee.token.maxLength),
                  rule.pointee.token.accepts(UnsafeBufferPointer(rebasing: bytes[text]))
            else { return nil }
            member.form = .token
        case .content:
            guard bytes[i] == UInt8(ascii: "{") else { return nil }
            let blanksBefore = blanks
            guard object() else { return nil }
            let skipped = blanks - blanksBefore
            // ActivityKit's limit, on the text as written.
            guard i - start - skipped <= rule.pointee.maxLength else { return nil }
            member.form = .object
            member.hasBlanks = skipped > 0
        case .alert:
            let blanksBefore = blanks
            guard alert(maxLength: rule.pointee.maxLength) else { return nil }
            member.form = .object
            member.hasBlanks = blanks > blanksBefore
        }
        member.range = start..<i
        return member
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

    /// A date (`FieldReader.date`): RFC 3339 text or Unix seconds, inside its row's window.
    private mutating func date(in window: Range<Double>) -> Double? {
        guard i < bytes.count else { return nil }
        let seconds: Double?
        if bytes[i] == UInt8(ascii: "\"") {
            guard let text = string() else { return nil }
            seconds = RFC3339.parse(String(decoding: UnsafeBufferPointer(rebasing: bytes[text]), as: UTF8.self))
        } else {
            seconds = double()
        }
        guard let seconds, window.contains(seconds) else { return nil }
        return seconds
    }

    /// An alert (`FieldReader.alert`): an object with at most one of each of its parts
    /// (`FieldSpec.alertParts`), strings of at most `maxLength` bytes.
    private mutating func alert(maxLength: Int) -> Bool {
        guard bytes[i] == UInt8(ascii: "{"), open < limits.maxDepth else { return false }
        i += 1
        skipBlanks()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            return true
        }
        var seen = 0, count = 0
        while true {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let name = string(),
                  let part = FieldSpec.alertParts.firstIndex(where: { Self.equals(bytes, name, $0) }),
                  seen & (1 << part) == 0
            else { return false }
            seen |= 1 << part
            count += 1
            skipBlanks()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return false }
            i += 1
            skipBlanks()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), let text = string(), text.count <= maxLength else { return false }
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
            for k in firstName..<nameCount where Int(names[k].count) == name.count
                && Self.equals(bytes, Int(names[k].start), name.lowerBound, name.count) {
                return false
            }
            guard nameCount < names.count else { return false }
            names[nameCount] = Name(start: Int32(truncatingIfNeeded: name.lowerBound), count: Int32(truncatingIfNeeded: name.count))
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

    @inline(__always)
    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ word: [UInt8]) -> Bool {
        range.count == word.count && word.withUnsafeBufferPointer { word in
            JSONGrammar.sameBytes(bytes.baseAddress! + range.lowerBound, word.baseAddress!, count: range.count)
        }
    }

    // MARK: The stored body

    /// The body's bytes as they are written, straight into the string's storage.
    struct Output {
        let base: UnsafeMutablePointer<UInt8>
        let capacity: Int
        var count = 0
        /// Set if the capacity was too small (never, by the bound in `storedBody`): then decline.
        var overflow = false

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

    /// What `EventValidator.storedBody` writes, from the members in body order (`order`): each
    /// as its row's stored form says (dates as RFC 3339, the token as its fingerprint under its
    /// stored name, a null left out where the row says so), objects without blanks, everything
    /// else as it came. Notes where each object was written (`Member.written`).
    private func storedBody(_ order: UnsafeBufferPointer<UInt8>, _ members: UnsafeMutableBufferPointer<Member>,
                            fingerprint: String) -> String? {
        // Only dates and the token's name grow (`Rules.growth`): the input's size plus that is
        // always enough.
        let capacity = bytes.count + rules.growth
        let body = String(unsafeUninitializedCapacity: capacity) { buffer in
            var out = Output(base: buffer.baseAddress!, capacity: buffer.count)
            write(order, members, fingerprint: fingerprint, to: &out)
            return out.overflow ? 0 : out.count
        }
        return body.isEmpty ? nil : body
    }

    private func write(_ order: UnsafeBufferPointer<UInt8>, _ members: UnsafeMutableBufferPointer<Member>,
                       fingerprint: String, to out: inout Output) {
        out.put(UInt8(ascii: "{"))
        var first = true
        // occurred_at and timestamp are often the same time: formatted once.
        var lastDate: (seconds: Double, text: String)?
        for field in order {
            let member = members[Int(field)]
            let rule = rules.byField.baseAddress! + Int(field)
            if member.form == .null, rule.pointee.stored == .nullLeftOut { continue }
            if !first { out.put(UInt8(ascii: ",")) }
            first = false
            out.put(UInt8(ascii: "\""))
            out.put(member.form == .token ? rule.pointee.token.storedName : rule.pointee.name)
            out.put("\":")
            switch member.form {
            case .null:
                out.put("null")
            case .verbatim:
                out.put(UnsafeBufferPointer(rebasing: bytes[member.range]))
            case .date:
                if !RFC3339.hasForm(member.number) {
                    // Stored as sent where RFC 3339 has no form for it (`EventValidator.storedBody`).
                    var number = JSONNumber(member.number).description
                    number.withUTF8 { out.put($0) }
                } else {
                    let text: String
                    if let lastDate, lastDate.seconds == member.number {
                        text = lastDate.text
                    } else {
                        text = RFC3339.format(member.number)
                        lastDate = (member.number, text)
                    }
                    out.put(quoted: text)
                }
            case .token:
                out.put(quoted: fingerprint)
            case .object:
                let start = out.count
                if member.hasBlanks {
                    // Blanks are left out outside strings (which hold no quote but their own).
                    var inString = false
                    for p in member.range {
                        let byte = bytes[p]
                        if byte == UInt8(ascii: "\"") {
                            inString.toggle()
                        } else if !inString, JSONGrammar.isWhitespace(byte) {
                            continue
                        }
                        out.put(byte)
                    }
                } else {
                    out.put(UnsafeBufferPointer(rebasing: bytes[member.range]))
                }
                members[Int(field)].written = start..<out.count
            }
        }
        out.put(UInt8(ascii: "}"))
    }
}

/// The scanner's checked values: places in the body (and in the stored body, for content
/// objects, whose text is the one the validator writes), for `Event.assembled(_:from:body:)`.
private struct ScannedFields: CheckedFields {
    let bytes: UnsafeBufferPointer<UInt8>
    let members: UnsafeMutableBufferPointer<PushEventScanner.Member>
    /// The fields present and not null, as bits.
    let present: UInt64
    let body: String
    let tokenField: EventField
    let fingerprint: String

    @inline(__always)
    private func member(_ field: EventField) -> PushEventScanner.Member? {
        present & field.bit != 0 ? members[Int(field.rawValue)] : nil
    }

    func text(_ field: EventField) -> String? {
        member(field).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[($0.range.lowerBound + 1)..<($0.range.upperBound - 1)]), as: UTF8.self) }
    }

    func number(_ field: EventField) -> Double? { member(field)?.number }
    func isPresent(_ field: EventField) -> Bool { present & field.bit != 0 }
    func integer(_ field: EventField) -> Int? { member(field)?.integer }
    func choice(_ field: EventField) -> Int? { member(field)?.integer }

    func content(_ field: EventField) -> JSONText? {
        guard let written = member(field)?.written else { return nil }
        let text = body.utf8.withContiguousStorageIfAvailable { String(decoding: UnsafeBufferPointer(rebasing: $0[written]), as: UTF8.self) }
        return JSONText(written: text ?? String(decoding: Array(body.utf8)[written], as: UTF8.self))
    }

    func fingerprint(_ field: EventField) -> String? {
        field == tokenField && present & field.bit != 0 ? fingerprint : nil
    }
}
