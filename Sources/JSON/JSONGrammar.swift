/// The byte-level grammar of JSON text, kept once for every reader of this package: the parser
/// (``JSONParser``, through `JSONReader`), the writer's escape table (``JSONWriter``), and the
/// one-pass scanner of another module (LiveActivityMonitor's `PushEventScanner`), which must
/// take only what the parser takes and what the writer writes back unchanged.
///
/// Public for that scanner, not for general use. The pieces called per byte or per value are
/// `@inlinable`, so that a reader in another module gets them inlined and, with a constant
/// `stops`, specialised (a call per byte would cost more than the work). `package` access would
/// do for visibility, but the Swift 6 compiler does not inline `package` functions across modules.
public enum JSONGrammar {
    // MARK: Bytes

    /// JSON's whitespace: space, tab, line feed, carriage return.
    @inlinable @inline(__always)
    public static func isWhitespace(_ byte: UInt8) -> Bool {
        // One comparison for the usual byte, which is none of them.
        byte <= 0x20 && (byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09)
    }

    @inlinable @inline(__always)
    public static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    /// Whether `count` bytes at `a` and `b` are equal: eight at a time, then the rest
    /// (`elementsEqual` walks an iterator: 16 instructions a byte).
    @inlinable @inline(__always)
    public static func sameBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
        var k = 0
        while k + 8 <= count {
            if a.loadUnaligned(fromByteOffset: k, as: UInt64.self) != b.loadUnaligned(fromByteOffset: k, as: UInt64.self) {
                return false
            }
            k += 8
        }
        while k < count {
            if a.load(fromByteOffset: k, as: UInt8.self) != b.load(fromByteOffset: k, as: UInt8.self) { return false }
            k += 1
        }
        return true
    }

    // MARK: Strings

    /// Where a run of plain string content ends.
    public enum StringStops: Sendable {
        /// At `"`, `\` or a control character: the parser's plain run (`"` ends the string, `\`
        /// starts an escape, a raw control character is refused).
        case parser
        /// Also at every byte below 0x80 that ``JSONWriter`` escapes (`&`, `<`, `>`): the run the
        /// writer copies as it is.
        case writer

        /// The bytes below 64 that stop the run: a bit per byte value.
        @inlinable
        public var below64: UInt64 {
            switch self {
            case .parser: 0xFFFF_FFFF | 1 << 0x22
            case .writer: JSONGrammar.writerEscapesBelow64
            }
        }
    }

    /// The bytes below 64 that ``JSONWriter`` escapes, a bit per byte value: control
    /// characters, `"`, `&`, `<`, `>`. (Above 63 it escapes `\`, and U+2028 and U+2029.)
    @inlinable
    public static var writerEscapesBelow64: UInt64 {
        0xFFFF_FFFF | 1 << 0x22 | 1 << 0x26 | 1 << 0x3C | 1 << 0x3E
    }

    /// The first position at or after `start` (before `end`) of a byte that `stops` names or a
    /// `\`, or `end`; and whether a non-ASCII byte came before it.
    @inlinable @inline(__always)
    public static func plainRun(_ buffer: UnsafeRawBufferPointer, from start: Int, to end: Int,
                                 stops: StringStops) -> (position: Int, nonASCII: Bool) {
        var p = start
        var seen: UInt64 = 0
        // Eight bytes at a time: only a word holding a special byte falls to the byte loop. Each
        // test sets the high bit of a byte equal to the one sought (and may set it in bytes
        // after a match too, which only sends the word to the byte loop).
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        while p + 8 <= end {
            let word = buffer.loadUnaligned(fromByteOffset: p, as: UInt64.self)
            @inline(__always) func has(_ byte: UInt64) -> UInt64 {
                let x = word ^ (ones &* byte)
                return (x &- ones) & ~x
            }
            var special = has(0x22) | has(0x5C) | ((word &- ones &* 0x20) & ~word)
            if case .writer = stops { special |= has(0x26) | has(0x3C) | has(0x3E) }
            if special & highBits != 0 { break }
            seen |= word
            p += 8
        }
        let below64 = stops.below64
        while p < end {
            let byte = buffer[p]
            if byte < 64 {
                if (below64 >> UInt64(byte)) & 1 != 0 { break }
            } else if byte == 0x5C {
                break
            }
            seen |= UInt64(byte)
            p += 1
        }
        return (p, seen & highBits != 0)
    }

    // MARK: UTF-8

    /// What is wrong with a UTF-8 sequence (RFC 3629).
    public enum UTF8Problem: Sendable {
        case unexpectedContinuation, overlong, truncated, encodedSurrogate, aboveMaximum, invalidByte
    }

    /// The sequence starting at a byte of 0x80 or above.
    public enum UTF8Sequence: Sendable {
        case valid(length: Int)
        case invalid(UTF8Problem)
    }

    /// The UTF-8 sequence whose lead byte (0x80 or above) is at `p`, within `buffer[..<end]`.
    @inlinable @inline(__always)
    public static func utf8Sequence(_ buffer: UnsafeRawBufferPointer, at p: Int, end: Int) -> UTF8Sequence {
        let lead = buffer[p]
        let length: Int
        // The allowed range of the byte after the lead (RFC 3629's table), and the problem a
        // byte outside it means.
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        var outside = UTF8Problem.truncated
        switch lead {
        case 0x80...0xBF: return .invalid(.unexpectedContinuation)
        case 0xC0, 0xC1: return .invalid(.overlong)
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0; outside = .overlong
        case 0xED: length = 3; high = 0x9F; outside = .encodedSurrogate
        case 0xE1...0xEF: length = 3
        case 0xF0: length = 4; low = 0x90; outside = .overlong
        case 0xF4: length = 4; high = 0x8F; outside = .aboveMaximum
        case 0xF1...0xF3: length = 4
        case 0xF5...0xF7: return .invalid(.aboveMaximum)
        default: return .invalid(.invalidByte)
        }
        guard p + 1 < end else { return .invalid(.truncated) }
        let second = buffer[p + 1]
        if second & 0xC0 != 0x80 { return .invalid(.truncated) }
        if second < low || second > high { return .invalid(outside) }
        var k = 2
        while k < length {
            guard p + k < end, buffer[p + k] & 0xC0 == 0x80 else { return .invalid(.truncated) }
            k += 1
        }
        return .valid(length: length)
    }

    /// The first invalid UTF-8 sequence in `buffer[start..<end]`, with what is wrong with it
    /// (as the parser's messages say it).
    static func firstInvalidUTF8(_ buffer: UnsafeRawBufferPointer, from start: Int,
                                         to end: Int) -> (offset: Int, detail: String)? {
        var p = start
        while p < end {
            if buffer[p] < 0x80 {
                p += 1
                continue
            }
            switch utf8Sequence(buffer, at: p, end: end) {
            case .valid(let length):
                p += length
            case .invalid(let problem):
                let detail = switch problem {
                case .unexpectedContinuation: "unexpected continuation byte \(hex(buffer[p]))"
                case .overlong: "overlong encoding"
                case .truncated: "truncated sequence"
                case .encodedSurrogate: "encoded surrogate"
                case .aboveMaximum: "above U+10FFFF"
                case .invalidByte: "invalid byte \(hex(buffer[p]))"
                }
                return (p, detail)
            }
        }
        return nil
    }

    /// Whether `buffer[start..<end]` is valid UTF-8 (as the parser checks it) without U+2028 or
    /// U+2029 (which ``JSONWriter`` escapes): string content the parser takes and the writer
    /// writes back unchanged, if it has no byte that `StringStops.writer` stops at either.
    @inlinable
    public static func isVerbatimUTF8(_ buffer: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Bool {
        var p = start
        while p < end {
            let lead = buffer[p]
            if lead < 0x80 {
                p += 1
                continue
            }
            guard case .valid(let length) = utf8Sequence(buffer, at: p, end: end) else { return false }
            // U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
            if lead == 0xE2, buffer[p + 1] == 0x80, buffer[p + 2] == 0xA8 || buffer[p + 2] == 0xA9 { return false }
            p += length
        }
        return true
    }

    /// `0x` and two uppercase hex digits, as messages show a byte.
    static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return "0x" + (digits.count < 2 ? "0" + digits : digits)
    }

    // MARK: Numbers

    /// A number literal read by RFC 8259's grammar.
    public struct NumberLiteral: Sendable {
        /// Just past its last byte.
        public var end: Int
        /// Whether it has a fraction (`.` and digits).
        public var hasFraction: Bool
        /// The digits of its exponent (0: none).
        public var exponentDigits: Int

        @inlinable
        public init(end: Int, hasFraction: Bool, exponentDigits: Int) {
            self.end = end
            self.hasFraction = hasFraction
            self.exponentDigits = exponentDigits
        }

        /// Neither fraction nor exponent: `-?digits`.
        @inlinable
        public var isPlainInteger: Bool { !hasFraction && exponentDigits == 0 }
    }

    /// Where and why a literal breaks the number grammar.
    public enum NumberProblem: Sendable {
        /// The input ends after `-`.
        case endOfInput
        /// A `0` followed by a digit.
        case leadingZero
        /// Not a digit where the first digit must be.
        case notADigit
        /// No digit after the decimal point.
        case noFractionDigit
        /// No digit in the exponent.
        case noExponentDigit
    }

    /// The number literal at `start` (at `-` or a digit) in `buffer[..<end]`, or the position and
    /// the problem where it breaks the grammar (`leadingZero` is at `start`).
    @inlinable @inline(__always)
    public static func numberLiteral(_ buffer: UnsafeRawBufferPointer, from start: Int,
                                      to end: Int) -> Result<NumberLiteral, NumberError> {
        var p = start
        if p < end, buffer[p] == UInt8(ascii: "-") { p += 1 }
        guard p < end else { return .failure(NumberError(problem: .endOfInput, at: p)) }
        let first = buffer[p]
        if first == UInt8(ascii: "0") {
            p += 1
            if p < end, isDigit(buffer[p]) { return .failure(NumberError(problem: .leadingZero, at: start)) }
        } else if isDigit(first) {
            p += 1
            while p < end, isDigit(buffer[p]) { p += 1 }
        } else {
            return .failure(NumberError(problem: .notADigit, at: p))
        }
        var hasFraction = false
        if p < end, buffer[p] == UInt8(ascii: ".") {
            hasFraction = true
            p += 1
            guard p < end, isDigit(buffer[p]) else { return .failure(NumberError(problem: .noFractionDigit, at: p)) }
            while p < end, isDigit(buffer[p]) { p += 1 }
        }
        var exponentDigits = 0
        if p < end, buffer[p] == UInt8(ascii: "e") || buffer[p] == UInt8(ascii: "E") {
            p += 1
            if p < end, buffer[p] == UInt8(ascii: "+") || buffer[p] == UInt8(ascii: "-") { p += 1 }
            let digits = p
            while p < end, isDigit(buffer[p]) { p += 1 }
            exponentDigits = p - digits
            guard exponentDigits > 0 else { return .failure(NumberError(problem: .noExponentDigit, at: p)) }
        }
        return .success(NumberLiteral(end: p, hasFraction: hasFraction, exponentDigits: exponentDigits))
    }

    /// A number literal's problem and where it is.
    public struct NumberError: Error {
        public var problem: NumberProblem
        public var at: Int

        @inlinable
        public init(problem: NumberProblem, at: Int) {
            self.problem = problem
            self.at = at
        }
    }

    /// The value of a plain integer literal (`-?digits`) of at most 18 digits, which no `Int`
    /// overflows; nil for any other text.
    @inlinable @inline(__always)
    public static func plainInteger(_ buffer: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int? {
        var p = start
        guard p < end else { return nil }
        let negative = buffer[p] == UInt8(ascii: "-")
        if negative { p += 1 }
        guard p < end, end - p <= 18 else { return nil }
        var value = 0
        while p < end {
            let digit = buffer[p] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value &* 10 &+ Int(digit)
            p += 1
        }
        return negative ? -value : value
    }

    /// The `Double` that the number literal `buffer[start..<end]` reads as (what
    /// `Double(String)` gives), or nil when that is not finite.
    @inlinable
    public static func doubleValue(_ buffer: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Double? {
        if let value = exactDouble(buffer, from: start, to: end) { return value }
        guard let value = Double(String(decoding: UnsafeRawBufferPointer(rebasing: buffer[start..<end]), as: UTF8.self)),
              value.isFinite
        else { return nil }
        return value
    }

    /// `-?digits(.digits)?` with at most 15 digits in all, without parsing text: the digits are
    /// an integer a `Double` holds exactly, and so is the power of ten dividing it, so the one
    /// rounding of the division gives the correctly rounded value, which is what parsing the
    /// literal gives too (Clinger's fast path). Nil for any other literal.
    @inlinable @inline(__always)
    public static func exactDouble(_ buffer: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Double? {
        var p = start
        guard p < end else { return nil }
        let negative = buffer[p] == UInt8(ascii: "-")
        if negative { p += 1 }
        var mantissa: UInt64 = 0
        var digits = 0, fractionDigits = 0
        var inFraction = false
        while p < end {
            let byte = buffer[p]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if isDigit(byte) {
                mantissa = mantissa &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
                digits += 1
                if inFraction { fractionDigits += 1 }
            } else {
                return nil
            }
            p += 1
        }
        guard digits > 0, digits <= 15 else { return nil }
        let value = Double(mantissa) / exactPowerOfTen(fractionDigits)
        return negative ? -value : value
    }

    /// 10^`exponent` for 0…15, each exactly a `Double`.
    @inlinable @inline(__always)
    public static func exactPowerOfTen(_ exponent: Int) -> Double {
        switch exponent {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        default: 1e15
        }
    }
}
