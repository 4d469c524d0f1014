import Testing
import JSON

@Test(arguments: [
    ("7", 7 as Int64?), ("-7", -7), ("0", 0), ("-0", 0), ("7.0", 7), ("7e0", 7), ("70e-1", 7),
    ("0.7e1", 7), ("1.5e1", 15), ("1E+2", 100), ("100e-2", 1), ("7.5", nil), ("0.1", nil),
    ("1e19", nil), ("1e18", 1_000_000_000_000_000_000),
    ("9223372036854775807", .max), ("-9223372036854775808", .min),
    ("9223372036854775808", nil), ("-9223372036854775809", nil), ("9223372036854775807.0", .max),
    ("92233720368547758.07e2", .max), ("0.000e99999", 0), ("1e-99999", nil), ("123e-99999", nil),
    ("12345678901234567890e-1", 1_234_567_890_123_456_789),
])
func int64ValueIsExact(literal: String, expected: Int64?) throws {
    let number = try #require(JSONNumber(literal: literal))
    #expect(number.int64Value == expected)
    #expect(number.intValue == expected.map(Int.init))
}

@Test(arguments: [
    (7.0, "7"), (0.1, "0.1"), (-0.0, "-0"), (42.5, "42.5"), (1e16, "1e+16"), (1e-7, "1e-07"),
    (Double.leastNonzeroMagnitude, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"), (123456.0, "123456"),
    (0.30000000000000004, "0.30000000000000004"),
])
func doublesUseTheShortestRoundTripText(value: Double, literal: String) throws {
    let number = JSONNumber(value)
    #expect(number.literal == literal)
    #expect(number.doubleValue == value)
    #expect(number.doubleValue.sign == value.sign)
    #expect(try JSONParser.parse(literal).numberValue?.doubleValue == value)
}

@Test func literalsAreValidated() {
    for valid in ["0", "-0", "0.50", "1E+2", "123456789012345678901234567890123456789012345678901234567890123456789", "-1.5e-3"] {
        #expect(JSONNumber(literal: valid)?.literal == valid, "\(valid)")
    }
    for invalid in ["", " 1", "1 ", "01", "+1", "1.", ".1", "1e", "NaN", "Infinity", "1e999", "0x1", "1,", "\"1\"", "[1]", "-"] {
        #expect(JSONNumber(literal: invalid) == nil, "\(invalid)")
    }
}

@Test func integersBuildPlainLiterals() {
    #expect(JSONNumber(Int64.min).literal == "-9223372036854775808")
    #expect(JSONNumber(42).literal == "42")
    #expect(JSONNumber(42).int64Value == 42)
    #expect(JSONNumber(Int64(-1)).description == "-1")
    #expect(JSONNumber(literal: "1e400") == nil)
    #expect(JSONNumber(literal: "1e-400")?.doubleValue == 0)
}
