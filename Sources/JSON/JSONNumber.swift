/// A JSON number kept as its literal text, so it round-trips exactly: `0.50` stays `0.50`
/// and `7` stays `7`.
///
/// Every `JSONNumber` holds a literal that matches the RFC 8259 number grammar and whose
/// `Double` value is finite.
///
/// Equality and hashing are by numeric value: two numbers are equal when their literals are
/// identical or their `Double` values are equal, so `1 == 1.0 == 1e0` and `0 == -0`. Integers
/// beyond 2^53 that round to the same `Double` therefore compare equal; compare ``literal``
/// when the exact text matters.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's text exactly as parsed or produced.
    public let literal: String

    /// Wraps a literal already validated by the parser.
    init(uncheckedLiteral literal: String) {
        self.literal = literal
    }

    /// Validates `literal` against the JSON number grammar (no sign `+`, no leading zeros, no
    /// surrounding whitespace) and range; `nil` when it is not a finite JSON number.
    public init?(literal: String) {
        var limits = JSONParser.Limits()
        limits.maxNumberLength = Int.max
        guard case .number(let number)? = try? JSONParser.parse(literal, limits: limits),
              number.literal.utf8.count == literal.utf8.count
        else { return nil }
        self = number
    }

    /// The shortest text that reads back as exactly `value`; integral values are written
    /// without a fraction (`7`, not `7.0`), large and tiny ones with an exponent (`1e+16`).
    ///
    /// - Precondition: `value` is finite; JSON has no infinity or NaN.
    public init(_ value: Double) {
        precondition(value.isFinite, "JSON numbers must be finite, got \(value)")
        // Swift's description is the shortest round-trip text and always valid JSON
        // ("1e-05", "1e+16", "-0.0"); only the ".0" of integral values is dropped.
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        literal = text
    }

    /// The integer's decimal text.
    public init(_ value: Int64) {
        literal = String(value)
    }

    /// The integer's decimal text.
    public init(_ value: Int) {
        literal = String(value)
    }

    /// The nearest `Double` (always finite; a literal too small to represent reads as zero).
    public var doubleValue: Double {
        // The literal is validated, so reading cannot fail; NaN would only flag a broken invariant.
        // `JSONGrammar.doubleValue`, so that a reader without a `JSONNumber` gets the same value.
        let value = literal.utf8.withContiguousStorageIfAvailable { utf8 in
            JSONGrammar.doubleValue(UnsafeRawBufferPointer(utf8), from: 0, to: utf8.count)
        }
        return (value ?? Double(literal)) ?? .nan
    }

    /// The exact integral value when the number has one and it fits in `Int64`; otherwise `nil`.
    ///
    /// Decided from the decimal text, not through `Double`, so it is exact for every
    /// `Int64`: `7`, `-7`, `7.0`, `7e0`, `70e-1` and `0.7e1` all give 7; `-0` gives 0;
    /// `7.5`, `1e19` and `9223372036854775808` give `nil`.
    public var int64Value: Int64? {
        // Plain integers (the common case) need no decimal arithmetic: read as
        // `JSONGrammar.plainInteger` reads them, so that a reader without a `JSONNumber` agrees.
        let plain = literal.utf8.withContiguousStorageIfAvailable { utf8 in
            JSONGrammar.plainInteger(UnsafeRawBufferPointer(utf8), from: 0, to: utf8.count)
        }
        if let plain, let plain { return Int64(plain) }
        if let value = Int64(literal) { return value }
        var utf8 = Array(literal.utf8)
        var negative = false
        if utf8.first == UInt8(ascii: "-") {
            negative = true
            utf8.removeFirst()
        }
        var digits: [UInt8] = []
        var exponent = 0
        var index = 0
        while index < utf8.count, utf8[index] >= 0x30, utf8[index] <= 0x39 {
            digits.append(utf8[index] - 0x30)
            index += 1
        }
        if index < utf8.count, utf8[index] == UInt8(ascii: ".") {
            index += 1
            while index < utf8.count, utf8[index] >= 0x30, utf8[index] <= 0x39 {
                digits.append(utf8[index] - 0x30)
                exponent -= 1
                index += 1
            }
        }
        if index < utf8.count, utf8[index] == UInt8(ascii: "e") || utf8[index] == UInt8(ascii: "E") {
            index += 1
            var exponentSign = 1
            if index < utf8.count, utf8[index] == UInt8(ascii: "-") || utf8[index] == UInt8(ascii: "+") {
                if utf8[index] == UInt8(ascii: "-") { exponentSign = -1 }
                index += 1
            }
            var written = 0
            while index < utf8.count, utf8[index] >= 0x30, utf8[index] <= 0x39 {
                // Saturate: any exponent past a million already decides the answer.
                written = min(written * 10 + Int(utf8[index] - 0x30), 1_000_000)
                index += 1
            }
            exponent += exponentSign * written
        }
        while let first = digits.first, first == 0 { digits.removeFirst() }
        if digits.isEmpty { return 0 }
        while exponent < 0, digits.last == 0 {
            digits.removeLast()
            exponent += 1
        }
        guard exponent >= 0, digits.count + exponent <= 19 else { return nil }
        // Accumulate negatively so Int64.min is reachable.
        var value: Int64 = 0
        for digit in digits + [UInt8](repeating: 0, count: exponent) {
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = shifted.subtractingReportingOverflow(Int64(digit))
            if overflow1 || overflow2 { return nil }
            value = next
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    /// ``int64Value`` as an `Int`, when it fits.
    public var intValue: Int? { int64Value.flatMap { Int(exactly: $0) } }

    public var description: String { literal }

    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        lhs.literal == rhs.literal || lhs.doubleValue == rhs.doubleValue
    }

    public func hash(into hasher: inout Hasher) {
        // Double's hash already treats 0.0 and -0.0 alike, matching ==.
        hasher.combine(doubleValue)
    }
}
