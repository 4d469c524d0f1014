/// The engine behind ``JSONParser``: one forward pass over a byte buffer with explicit stacks
/// instead of recursion. Values of the containers being read wait on one shared stack and are
/// moved into their array or object when it closes, so each container is allocated once at
/// its final size. A reader is reused across NDJSON lines to keep the stacks' capacity.
struct JSONReader {
    private let buffer: UnsafeRawBufferPointer
    private let limits: JSONParser.Limits
    /// Current position.
    private var i = 0
    /// End of the document being read (a line, for NDJSON).
    private var end = 0
    /// Line number of `documentStart`, and where line/column counting starts from.
    private var firstLine = 1
    private var documentStart = 0

    /// One open array or object.
    private struct Frame {
        var isObject: Bool
        /// Where this container's values begin on `values`.
        var valueStart: Int
        /// Where this object's keys begin on `keys`.
        var keyStart: Int
        /// For objects with many members: key → position, to find duplicates in O(1).
        var index: [JSONKey: Int]?
    }

    private var frames: [Frame] = []
    private var values: [JSONValue] = []
    private var keys: [String] = []
    /// A cheap fingerprint of each key on `keys`, so duplicate checks rarely compare strings.
    private var fingerprints: [UInt64] = []
    /// Fingerprint of the string `readString` returned last.
    private var lastFingerprint: UInt64 = 0
    /// Objects with more members than this find duplicates through a dictionary instead of
    /// a scan of fingerprints (which beats hashing for the usual 10 to 30 keys).
    static let linearDuplicateScanLimit = 64
    /// Unescaped bytes of the string being read, when it has escapes.
    private var scratch: [UInt8] = []

    init(buffer: UnsafeRawBufferPointer, limits: JSONParser.Limits) {
        self.buffer = buffer
        self.limits = limits
        // Room for a small object from the start: the store writer parses each push's content
        // (a few members), and growing the stacks from empty reallocated each two or three times.
        frames.reserveCapacity(4)
        values.reserveCapacity(16)
        keys.reserveCapacity(16)
        fingerprints.reserveCapacity(16)
    }

    // MARK: Document

    /// Reads the one value in `buffer[start..<end]`, which starts at line `line`.
    mutating func readDocument(from start: Int, to end: Int, line: Int) throws(JSONError) -> JSONValue {
        i = start
        self.end = end
        documentStart = start
        firstLine = line
        frames.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        fingerprints.removeAll(keepingCapacity: true)

        if end - start >= 3, buffer[start] == 0xEF, buffer[start + 1] == 0xBB, buffer[start + 2] == 0xBF {
            throw failure("byte order mark not allowed", at: start)
        }
        skipWhitespace()
        guard i < end else { throw failure("empty input", at: i) }
        let value = try readValue()
        skipWhitespace()
        if i < end {
            throw failure("unexpected \(describeByte(at: i))", at: i, expected: "end of input after the value")
        }
        return value
    }

    /// The position of the first LF at or after `start`, or the buffer's end.
    static func nextNewline(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int {
        var p = start
        let count = buffer.count
        let ones: UInt64 = 0x0101_0101_0101_0101
        while p + 8 <= count {
            let newlines = buffer.loadUnaligned(fromByteOffset: p, as: UInt64.self) ^ (ones &* 0x0A)
            if (newlines &- ones) & ~newlines & 0x8080_8080_8080_8080 != 0 { break }
            p += 8
        }
        while p < count, buffer[p] != 0x0A { p += 1 }
        return p
    }

    static func isBlank(_ buffer: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Bool {
        var p = start
        while p < end {
            guard JSONGrammar.isWhitespace(buffer[p]) else { return false }
            p += 1
        }
        return true
    }

    // MARK: Values

    /// Reads one complete value, containers included, without recursion.
    private mutating func readValue() throws(JSONError) -> JSONValue {
        readValues: while true {
            // Here a value must start.
            skipWhitespace()
            guard i < end else { throw failure("unexpected end of input", at: i, expected: "a value") }
            var value: JSONValue
            switch buffer[i] {
            case UInt8(ascii: "\""):
                value = .string(try readString())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = .number(try readNumber())
            case UInt8(ascii: "{"):
                try enterContainer()
                i += 1
                skipWhitespace()
                if i < end, buffer[i] == UInt8(ascii: "}") {
                    i += 1
                    value = .object(JSONObject())
                } else {
                    frames.append(Frame(isObject: true, valueStart: values.count, keyStart: keys.count, index: nil))
                    try readMemberName()
                    continue readValues
                }
            case UInt8(ascii: "["):
                try enterContainer()
                i += 1
                skipWhitespace()
                if i < end, buffer[i] == UInt8(ascii: "]") {
                    i += 1
                    value = .array([])
                } else {
                    frames.append(Frame(isObject: false, valueStart: values.count, keyStart: keys.count, index: nil))
                    continue readValues
                }
            case UInt8(ascii: "t"):
                try readLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try readLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try readLiteral("null")
                value = .null
            default:
                throw failure("unexpected \(describeByte(at: i))", at: i, expected: "a value")
            }

            // A value is complete: hand it to its container, then close as many as end here.
            while true {
                guard !frames.isEmpty else { return value }
                let top = frames.count - 1
                values.append(value)
                let isObject = frames[top].isObject
                let elementCount = values.count - frames[top].valueStart
                if elementCount > limits.maxContainerCount {
                    throw failure("more than \(limits.maxContainerCount) \(isObject ? "members in an object" : "elements in an array")", at: i)
                }
                skipWhitespace()
                guard i < end else {
                    throw failure("unexpected end of input", at: i, expected: "',' or '\(isObject ? "}" : "]")'")
                }
                let byte = buffer[i]
                if byte == UInt8(ascii: ",") {
                    let comma = i
                    i += 1
                    skipWhitespace()
                    if i < end, buffer[i] == UInt8(ascii: isObject ? "}" : "]") {
                        throw failure("trailing comma", at: comma)
                    }
                    if isObject { try readMemberName() }
                    continue readValues
                }
                if isObject, byte == UInt8(ascii: "}") {
                    i += 1
                    value = .object(closeObject())
                } else if !isObject, byte == UInt8(ascii: "]") {
                    i += 1
                    value = .array(closeArray())
                } else {
                    throw failure("unexpected \(describeByte(at: i))", at: i, expected: "',' or '\(isObject ? "}" : "]")'")
                }
            }
        }
    }

    /// Checks the depth limit before a container is entered.
    private func enterContainer() throws(JSONError) {
        if frames.count >= limits.maxDepth {
            throw failure("nesting deeper than \(limits.maxDepth)", at: i)
        }
    }

    /// Reads `"name"` and the `:` after it, rejecting a name the open object already has.
    private mutating func readMemberName() throws(JSONError) {
        skipWhitespace()
        guard i < end else { throw failure("unexpected end of input", at: i, expected: "a member name") }
        guard buffer[i] == UInt8(ascii: "\"") else {
            throw failure("unexpected \(describeByte(at: i))", at: i, expected: "a member name in double quotes")
        }
        let nameOffset = i
        let name = try readString()
        let fingerprint = lastFingerprint
        let top = frames.count - 1
        let keyStart = frames[top].keyStart
        let memberCount = keys.count - keyStart
        if frames[top].index != nil {
            if frames[top].index!.updateValue(memberCount, forKey: JSONKey(name)) != nil {
                throw failure("duplicate key \(Self.quoted(name))", at: nameOffset)
            }
        } else {
            // Integer fingerprints first: strings are compared only when those match.
            var k = keyStart
            while k < keys.count {
                if fingerprints[k] == fingerprint, JSONKey.same(keys[k], name) {
                    throw failure("duplicate key \(Self.quoted(name))", at: nameOffset)
                }
                k += 1
            }
            if memberCount + 1 > Self.linearDuplicateScanLimit {
                var index = [JSONKey: Int](minimumCapacity: memberCount * 2)
                for position in 0..<memberCount { index[JSONKey(keys[keyStart + position])] = position }
                index[JSONKey(name)] = memberCount
                frames[top].index = index
            }
        }
        skipWhitespace()
        guard i < end else { throw failure("unexpected end of input", at: i, expected: "':'") }
        guard buffer[i] == UInt8(ascii: ":") else {
            throw failure("unexpected \(describeByte(at: i))", at: i, expected: "':'")
        }
        i += 1
        keys.append(name)
        fingerprints.append(fingerprint)
    }

    private mutating func closeArray() -> [JSONValue] {
        let frame = frames.removeLast()
        let count = values.count - frame.valueStart
        let start = frame.valueStart
        let array = values.withUnsafeMutableBufferPointer { stack in
            // Move the elements out (no retain/release), leaving trivial `.null`s behind.
            let source = stack.baseAddress! + start
            let array = [JSONValue](unsafeUninitializedCapacity: count) { target, initialized in
                target.baseAddress!.moveInitialize(from: source, count: count)
                initialized = count
            }
            source.initialize(repeating: .null, count: count)
            return array
        }
        values.removeSubrange(start...)
        return array
    }

    private mutating func closeObject() -> JSONObject {
        let frame = frames.removeLast()
        let count = values.count - frame.valueStart
        let valueStart = frame.valueStart
        let keyStart = frame.keyStart
        let entries = values.withUnsafeMutableBufferPointer { valueStack in
            keys.withUnsafeMutableBufferPointer { keyStack in
                // Move keys and values out, leaving trivial values behind (see closeArray).
                let valueSource = valueStack.baseAddress! + valueStart
                let keySource = keyStack.baseAddress! + keyStart
                let entries = [JSONObject.Element](unsafeUninitializedCapacity: count) { target, initialized in
                    for k in 0..<count {
                        (target.baseAddress! + k).initialize(to: (key: (keySource + k).move(), value: (valueSource + k).move()))
                    }
                    initialized = count
                }
                valueSource.initialize(repeating: .null, count: count)
                keySource.initialize(repeating: "", count: count)
                return entries
            }
        }
        values.removeSubrange(valueStart...)
        keys.removeSubrange(keyStart...)
        fingerprints.removeSubrange(keyStart...)
        return JSONObject(uniqueEntries: entries, index: frame.index)
    }

    private mutating func readLiteral(_ word: StaticString) throws(JSONError) {
        let length = word.utf8CodeUnitCount
        let start = word.utf8Start
        var k = 0
        while k < length {
            guard i + k < end, buffer[i + k] == start[k] else {
                throw failure("invalid literal", at: i, expected: "'\(word)'")
            }
            k += 1
        }
        i += length
    }

    // MARK: Numbers

    private mutating func readNumber() throws(JSONError) -> JSONNumber {
        let start = i
        let literal: JSONGrammar.NumberLiteral
        switch JSONGrammar.numberLiteral(buffer, from: start, to: end) {
        case .success(let read): literal = read
        case .failure(let error):
            switch error.problem {
            case .endOfInput: throw failure("unexpected end of input in a number", at: error.at)
            case .leadingZero: throw failure("leading zero in a number", at: error.at)
            case .notADigit: throw failure("unexpected \(describeByte(at: error.at))", at: error.at, expected: "a digit")
            case .noFractionDigit: throw failure("expected a digit after the decimal point", at: error.at)
            case .noExponentDigit: throw failure("expected a digit in the exponent", at: error.at)
            }
        }
        let p = literal.end
        let length = p - start
        if length > limits.maxNumberLength {
            throw failure("number longer than \(limits.maxNumberLength) characters", at: start)
        }
        // Without an exponent a literal needs over 308 digits to overflow a Double.
        if literal.exponentDigits > 0 || length > 300 {
            guard JSONGrammar.doubleValue(buffer, from: start, to: p) != nil else {
                throw failure("number out of range", at: start)
            }
        }
        i = p
        return JSONNumber(uncheckedLiteral: String(decoding: UnsafeRawBufferPointer(rebasing: buffer[start..<p]), as: UTF8.self))
    }

    // MARK: Strings

    /// Reads a string starting at the opening quote at `i`.
    private mutating func readString() throws(JSONError) -> String {
        let quote = i
        let start = i + 1
        var (p, nonASCII) = scanPlain(from: start)
        guard p < end else { throw stringFailure("unterminated string", at: quote, contentStart: start, scanned: p) }
        var byte = buffer[p]
        if byte == UInt8(ascii: "\"") {
            // Fast path: no escapes, the bytes are the string.
            if p - start > limits.maxStringBytes {
                throw failure("string longer than \(limits.maxStringBytes) bytes", at: quote)
            }
            if nonASCII, let (position, detail) = JSONGrammar.firstInvalidUTF8(buffer, from: start, to: p) {
                throw utf8Error(at: position, detail: detail)
            }
            let raw = UnsafeRawBufferPointer(rebasing: buffer[start..<p])
            lastFingerprint = Self.fingerprint(raw)
            i = p + 1
            // Validated above, so decoding repairs nothing (the standard library's own check
            // only re-runs its fast ASCII scan).
            return String(decoding: raw, as: UTF8.self)
        }
        if byte < 0x20 {
            throw stringFailure("unescaped control character \(Self.hex(byte)) in a string", at: p, contentStart: start, scanned: p)
        }

        // Slow path: copy plain runs and decoded escapes into `scratch`.
        scratch.removeAll(keepingCapacity: true)
        appendToScratch(from: start, to: p)
        while true {
            // `p` is at a backslash.
            let escape = p
            p += 1
            guard p < end else { throw stringFailure("unterminated string", at: quote, contentStart: start, scanned: escape) }
            switch buffer[p] {
            case UInt8(ascii: "\""): scratch.append(0x22); p += 1
            case UInt8(ascii: "\\"): scratch.append(0x5C); p += 1
            case UInt8(ascii: "/"): scratch.append(0x2F); p += 1
            case UInt8(ascii: "b"): scratch.append(0x08); p += 1
            case UInt8(ascii: "f"): scratch.append(0x0C); p += 1
            case UInt8(ascii: "n"): scratch.append(0x0A); p += 1
            case UInt8(ascii: "r"): scratch.append(0x0D); p += 1
            case UInt8(ascii: "t"): scratch.append(0x09); p += 1
            case UInt8(ascii: "u"):
                var scalar = try readHex4(at: p + 1, escape: escape)
                p += 5
                if scalar >= 0xD800, scalar <= 0xDBFF {
                    guard p + 1 < end, buffer[p] == UInt8(ascii: "\\"), buffer[p + 1] == UInt8(ascii: "u") else {
                        throw stringFailure("lone surrogate \\u\(Self.hex4(scalar)) in a string", at: escape, contentStart: start, scanned: escape)
                    }
                    let low = try readHex4(at: p + 2, escape: p)
                    guard low >= 0xDC00, low <= 0xDFFF else {
                        throw stringFailure("lone surrogate \\u\(Self.hex4(scalar)) in a string", at: escape, contentStart: start, scanned: escape)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    p += 6
                } else if scalar >= 0xDC00, scalar <= 0xDFFF {
                    throw stringFailure("lone surrogate \\u\(Self.hex4(scalar)) in a string", at: escape, contentStart: start, scanned: escape)
                }
                appendUTF8(scalar)
            default:
                throw stringFailure("invalid escape '\\\(Self.printable(buffer[p]))' in a string", at: escape, contentStart: start, scanned: escape)
            }
            let runStart = p
            let (next, runNonASCII) = scanPlain(from: p)
            p = next
            nonASCII = nonASCII || runNonASCII
            guard p < end else { throw stringFailure("unterminated string", at: quote, contentStart: start, scanned: p) }
            appendToScratch(from: runStart, to: p)
            byte = buffer[p]
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 {
                throw stringFailure("unescaped control character \(Self.hex(byte)) in a string", at: p, contentStart: start, scanned: p)
            }
            if scratch.count > limits.maxStringBytes {
                throw failure("string longer than \(limits.maxStringBytes) bytes", at: quote)
            }
        }
        if scratch.count > limits.maxStringBytes {
            throw failure("string longer than \(limits.maxStringBytes) bytes", at: quote)
        }
        // Escapes are ASCII and decode to whole sequences, so checking the raw bytes checks
        // the result, and locates the error in the input.
        if nonASCII, let (position, detail) = JSONGrammar.firstInvalidUTF8(buffer, from: start, to: p) {
            throw utf8Error(at: position, detail: detail)
        }
        i = p + 1
        return scratch.withUnsafeBytes { decoded in
            lastFingerprint = Self.fingerprint(decoded)
            return String(decoding: decoded, as: UTF8.self)
        }
    }

    /// The first position at or after `start` holding `"`, `\` or a control character (or
    /// `end`), and whether a non-ASCII byte came before it.
    @inline(__always)
    private func scanPlain(from start: Int) -> (position: Int, nonASCII: Bool) {
        JSONGrammar.plainRun(buffer, from: start, to: end, stops: .parser)
    }

    /// Length plus first and last eight bytes: enough to tell real keys apart cheaply.
    @inline(__always)
    private static func fingerprint(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        var head: UInt64 = 0
        var tail: UInt64 = 0
        if count >= 8 {
            head = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
            tail = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else {
            for k in 0..<count { head = head << 8 | UInt64(bytes[k]) }
        }
        return (head &* 0x9E37_79B9_7F4A_7C15) ^ tail ^ UInt64(truncatingIfNeeded: count)
    }

    private mutating func appendToScratch(from start: Int, to end: Int) {
        guard end > start else { return }
        scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | (scalar >> 6)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | (scalar >> 12)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            scratch.append(UInt8(0xF0 | (scalar >> 18)))
            scratch.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    /// The four hex digits at `p`, for the `\u` escape at `escape`.
    private func readHex4(at p: Int, escape: Int) throws(JSONError) -> UInt32 {
        guard p + 4 <= end else { throw failure("invalid \\u escape in a string", at: escape) }
        var value: UInt32 = 0
        for k in 0..<4 {
            let byte = buffer[p + k]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape in a string", at: escape)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    // MARK: Whitespace

    @inline(__always)
    private mutating func skipWhitespace() {
        while i < end, JSONGrammar.isWhitespace(buffer[i]) { i += 1 }
    }

    // MARK: Errors

    /// An error inside a string at `offset`, unless invalid UTF-8 comes earlier in the string's
    /// bytes `contentStart..<scanned`, which is then the error reported.
    private func stringFailure(_ reason: String, at offset: Int, contentStart: Int, scanned: Int) -> JSONError {
        if let (position, detail) = JSONGrammar.firstInvalidUTF8(buffer, from: contentStart, to: scanned) {
            return utf8Error(at: position, detail: detail)
        }
        return failure(reason, at: offset)
    }

    /// The error for bytes `start..<end` known to hold invalid UTF-8.
    private func utf8Failure(from start: Int, to end: Int) -> JSONError {
        guard let (position, detail) = JSONGrammar.firstInvalidUTF8(buffer, from: start, to: end) else {
            // Unreachable while this validator and the standard library's agree.
            return failure("invalid UTF-8 in a string", at: start)
        }
        return utf8Error(at: position, detail: detail)
    }

    private func utf8Error(at offset: Int, detail: String) -> JSONError {
        let (line, column) = lineAndColumn(of: offset)
        return JSONError(message: "invalid UTF-8 at byte \(offset) (\(detail))", offset: offset, line: line, column: column)
    }

    /// An error whose message reads "reason at line L, column C[; expected what]".
    private func failure(_ reason: String, at offset: Int, expected: String? = nil) -> JSONError {
        let (line, column) = lineAndColumn(of: offset)
        var message = "\(reason) at line \(line), column \(column)"
        if let expected { message += "; expected \(expected)" }
        return JSONError(message: message, offset: offset, line: line, column: column)
    }

    /// Line and column (in Unicode scalars) of `offset`; only computed on the error path.
    private func lineAndColumn(of offset: Int) -> (line: Int, column: Int) {
        var line = firstLine
        var lineStart = documentStart
        var p = documentStart
        while p < offset {
            if buffer[p] == 0x0A {
                line += 1
                lineStart = p + 1
            }
            p += 1
        }
        var column = 1
        p = lineStart
        while p < offset {
            if buffer[p] & 0xC0 != 0x80 { column += 1 }
            p += 1
        }
        return (line, column)
    }

    /// How an unexpected byte is named in messages: a printable character in quotes, a
    /// non-ASCII character as U+XXXX (or the UTF-8 problem), anything else as hex.
    private func describeByte(at offset: Int) -> String {
        let byte = buffer[offset]
        if byte >= 0x20, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        if byte >= 0x80 {
            if JSONGrammar.firstInvalidUTF8(buffer, from: offset, to: min(offset + 4, end)).map({ $0.offset == offset }) ?? false {
                return "byte \(Self.hex(byte)) (invalid UTF-8)"
            }
            var scalar = UInt32(byte)
            var length = 1
            if byte >= 0xF0 { scalar &= 0x07; length = 4 } else if byte >= 0xE0 { scalar &= 0x0F; length = 3 } else { scalar &= 0x1F; length = 2 }
            for k in 1..<length { scalar = scalar << 6 | UInt32(buffer[offset + k] & 0x3F) }
            return "character U+\(Self.hex4(scalar))"
        }
        return "byte \(Self.hex(byte))"
    }

    private static func printable(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? String(Character(Unicode.Scalar(byte))) : hex(byte)
    }

    private static func hex(_ byte: UInt8) -> String {
        JSONGrammar.hex(byte)
    }

    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// A member name for a message: quoted, escaped, and cut to 40 characters so an error
    /// never echoes much of the input.
    private static func quoted(_ name: String) -> String {
        let shown = name.count > 40 ? String(name.prefix(40)) + "…" : name
        return JSONValue.string(shown).jsonString
    }
}
