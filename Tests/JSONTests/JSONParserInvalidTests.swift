import Testing
import JSON

/// Invalid input, the text its error message must contain, and optionally where it points.
struct InvalidCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let message: String
    let line: Int?
    let column: Int?
    let offset: Int?

    init(_ name: String, _ text: String, _ message: String, line: Int? = nil, column: Int? = nil, offset: Int? = nil) {
        self.init(name, Array(text.utf8), message, line: line, column: column, offset: offset)
    }

    init(_ name: String, _ bytes: [UInt8], _ message: String, line: Int? = nil, column: Int? = nil, offset: Int? = nil) {
        self.name = name
        self.bytes = bytes
        self.message = message
        self.line = line
        self.column = column
        self.offset = offset
    }

    var testDescription: String { name }
}

private let quote = UInt8(ascii: "\"")

let invalidCases: [InvalidCase] = [
    // Structure.
    InvalidCase("empty input", "", "empty input", line: 1, column: 1, offset: 0),
    InvalidCase("only whitespace", " \n\t", "empty input", line: 2, column: 2, offset: 3),
    InvalidCase("trailing comma in array", "[1,2,]", "trailing comma at line 1, column 5", offset: 4),
    InvalidCase("trailing comma in object", #"{"a":1,}"#, "trailing comma at line 1, column 7"),
    InvalidCase("double comma", #"{"a":1,,"b":2}"#, "unexpected ',' at line 1, column 8; expected a member name"),
    InvalidCase("leading comma", "[,1]", "unexpected ',' at line 1, column 2; expected a value"),
    InvalidCase("missing comma", "[1 2]", "unexpected '2' at line 1, column 4; expected ',' or ']'"),
    InvalidCase("missing colon", #"{"a" 1}"#, "unexpected '1' at line 1, column 6; expected ':'"),
    InvalidCase("unquoted key", "{a:1}", "unexpected 'a' at line 1, column 2; expected a member name"),
    InvalidCase("single quotes", "['a']", "unexpected ''' at line 1, column 2"),
    InvalidCase("unclosed array", "[1,2", "unexpected end of input at line 1, column 5; expected ',' or ']'"),
    InvalidCase("unclosed object", #"{"a":1"#, "unexpected end of input at line 1, column 7; expected ',' or '}'"),
    InvalidCase("mismatched close", "[1}", "unexpected '}'"),
    InvalidCase("garbage after value", "{} x", "unexpected 'x' at line 1, column 4; expected end of input after the value"),
    InvalidCase("two values", "1 2", "unexpected '2' at line 1, column 3"),
    InvalidCase("line comment", "[1] // note", "unexpected '/'"),
    InvalidCase("block comment", "[1 /* note */]", "unexpected '/'"),
    InvalidCase("byte order mark", [0xEF, 0xBB, 0xBF] + Array("{}".utf8), "byte order mark not allowed"),
    InvalidCase("form feed is not whitespace", "\u{0C}1", "unexpected byte 0x0C"),
    InvalidCase("no-break space is not whitespace", "[\u{A0}1]", "unexpected character U+00A0 at line 1, column 2"),
    InvalidCase("vertical tab", "[1,\u{0B}2]", "unexpected byte 0x0B"),
    InvalidCase("stray invalid byte", [UInt8(ascii: "["), 0xFF, UInt8(ascii: "]")], "unexpected byte 0xFF (invalid UTF-8)"),
    // Literals.
    InvalidCase("NaN", "NaN", "unexpected 'N'"),
    InvalidCase("Infinity", "[Infinity]", "unexpected 'I'"),
    InvalidCase("negative Infinity", "-Infinity", "unexpected 'I' at line 1, column 2; expected a digit"),
    InvalidCase("truncated true", "tru", "invalid literal at line 1, column 1; expected 'true'"),
    InvalidCase("capital True", "True", "unexpected 'T'"),
    InvalidCase("nul", "[nul]", "invalid literal"),
    // Numbers.
    InvalidCase("leading zero", "01", "leading zero in a number at line 1, column 1"),
    InvalidCase("negative leading zero", "[-012]", "leading zero in a number at line 1, column 2"),
    InvalidCase("leading plus", "+1", "unexpected '+'"),
    InvalidCase("leading point", ".5", "unexpected '.'"),
    InvalidCase("trailing point", "1.", "expected a digit after the decimal point at line 1, column 3"),
    InvalidCase("point before exponent", "1.e5", "expected a digit after the decimal point"),
    InvalidCase("empty exponent", "1e", "expected a digit in the exponent"),
    InvalidCase("signed empty exponent", "1e+", "expected a digit in the exponent"),
    InvalidCase("lone minus", "-", "unexpected end of input in a number"),
    InvalidCase("hex", "0x10", "unexpected 'x'"),
    InvalidCase("out of range", "1e999", "number out of range at line 1, column 1"),
    InvalidCase("negative out of range", #"{"a":-1e999}"#, "number out of range at line 1, column 6"),
    InvalidCase("out of range, large mantissa", "17976931348623159e292", "number out of range"),
    InvalidCase("too long", "1" + String(repeating: "0", count: 64), "number longer than 64 characters"),
    // Strings.
    InvalidCase("lone high surrogate", #""\ud800""#, "lone surrogate \\uD800 in a string at line 1, column 2"),
    InvalidCase("lone low surrogate", #""\udc00""#, "lone surrogate \\uDC00"),
    InvalidCase("high surrogate then letter", #""\ud800\u0041""#, "lone surrogate \\uD800"),
    InvalidCase("high surrogate then text", #""\ud800abcdef""#, "lone surrogate \\uD800"),
    InvalidCase("reversed surrogates", #""\udc00\ud800""#, "lone surrogate \\uDC00"),
    InvalidCase("overlong slash C0 AF", [quote, 0xC0, 0xAF, quote], "invalid UTF-8 at byte 1 (overlong encoding)", offset: 1),
    InvalidCase("byte FF", [quote, UInt8(ascii: "a"), 0xFF, quote], "invalid UTF-8 at byte 2 (invalid byte 0xFF)", offset: 2),
    InvalidCase("byte FE in a key", Array(#"{"k"#.utf8) + [0xFE] + Array(#"":1}"#.utf8), "invalid UTF-8 at byte 3"),
    InvalidCase("truncated sequence", [quote, 0xE2, 0x82, quote], "invalid UTF-8 at byte 1 (truncated sequence)"),
    InvalidCase("truncated at end of input", [quote, 0xF0, 0x9F, 0x98], "invalid UTF-8 at byte 1 (truncated sequence)"),
    InvalidCase("lone continuation byte", [quote, 0x80, quote], "invalid UTF-8 at byte 1 (unexpected continuation byte 0x80)"),
    InvalidCase("overlong three bytes", [quote, 0xE0, 0x80, 0xAF, quote], "invalid UTF-8 at byte 1 (overlong encoding)"),
    InvalidCase("overlong four bytes", [quote, 0xF0, 0x80, 0x80, 0xAF, quote], "invalid UTF-8 at byte 1 (overlong encoding)"),
    InvalidCase("encoded surrogate", [quote, 0xED, 0xA0, 0x80, quote], "invalid UTF-8 at byte 1 (encoded surrogate)"),
    InvalidCase("above U+10FFFF", [quote, 0xF4, 0x90, 0x80, 0x80, quote], "invalid UTF-8 at byte 1 (above U+10FFFF)"),
    InvalidCase("F5 lead byte", [quote, 0xF5, 0x80, 0x80, 0x80, quote], "invalid UTF-8 at byte 1 (above U+10FFFF)"),
    InvalidCase("invalid UTF-8 after an escape", [quote, UInt8(ascii: "\\"), UInt8(ascii: "n"), 0xC3, quote], "invalid UTF-8 at byte 3 (truncated sequence)"),
    InvalidCase("invalid UTF-8 before a newline", [quote, 0xFF, 0x0A, quote], "invalid UTF-8 at byte 1"),
    InvalidCase("raw newline", "\"a\nb\"", "unescaped control character 0x0A in a string at line 1, column 3"),
    InvalidCase("raw tab", "\"a\tb\"", "unescaped control character 0x09"),
    InvalidCase("raw NUL", "\"\u{0}\"", "unescaped control character 0x00"),
    InvalidCase("raw newline after an escape", "\"\\t\n\"", "unescaped control character 0x0A"),
    InvalidCase("unterminated string", #"["abc"#, "unterminated string at line 1, column 2"),
    InvalidCase("unterminated after escape", #""abc\"#, "unterminated string"),
    InvalidCase("invalid escape", #""\x41""#, #"invalid escape '\x' in a string at line 1, column 2"#),
    InvalidCase("escaped single quote", #""\'""#, #"invalid escape '\''"#),
    InvalidCase("bad hex", #""\u12G4""#, "invalid \\u escape"),
    InvalidCase("short hex", #""\u12""#, "invalid \\u escape"),
    // Keys.
    InvalidCase("duplicate key", #"{"a":1,"a":2}"#, #"duplicate key "a" at line 1, column 8"#),
    InvalidCase("duplicate key after escape", #"{"é":1,"\u00e9":2}"#, #"duplicate key "é""#),
    InvalidCase("duplicate key in a nested object", #"{"a":{"b":1,"c":2,"b":3}}"#, #"duplicate key "b" at line 1, column 19"#),
    InvalidCase("duplicate key among 40",
                "{" + (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"k3\":0}", #"duplicate key "k3""#),
    // Past 64 members duplicates are found through a dictionary.
    InvalidCase("duplicate key among 200",
                "{" + (0..<200).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + ",\"k150\":0}", #"duplicate key "k150""#),
    InvalidCase("duplicate long keys differing in the middle",
                #"{"prefix-aaaa-suffix-x":1,"prefix-bbbb-suffix-x":2,"prefix-aaaa-suffix-x":3}"#, #"duplicate key "prefix-aaaa-suffix-x" at line 1, column 52"#),
    InvalidCase("duplicate key that needs escaping", #"{"<x>":1,"<x>":2}"#, #"duplicate key "\u003cx\u003e""#),
    // Positions on later lines count Unicode scalars.
    InvalidCase("position on line 3", "{\n  \"a\": 1,\n  \"b\": tru\n}", "invalid literal at line 3, column 8", line: 3, column: 8, offset: 19),
    InvalidCase("column counts characters", "[\"é€😀\", x]", "unexpected 'x' at line 1, column 9", line: 1, column: 9, offset: 14),
    InvalidCase("CRLF lines", "[\r\n1,\r\n,]", "unexpected ',' at line 3, column 1", line: 3, column: 1),
]

@Test("invalid input is rejected with a precise message", arguments: invalidCases)
func invalidInputIsRejected(_ testCase: InvalidCase) {
    let error = #expect(throws: JSONError.self) { try JSONParser.parse(testCase.bytes) }
    guard let error else { return }
    #expect(error.message.contains(testCase.message), "got: \(error.message)")
    #expect(error.description == error.message)
    if let line = testCase.line { #expect(error.line == line) }
    if let column = testCase.column { #expect(error.column == column) }
    if let offset = testCase.offset { #expect(error.offset == offset) }
    #expect(error.offset >= 0 && error.offset <= testCase.bytes.count)
}

@Test func depthBombFailsAtTheLimitWithoutDescending() {
    // A million open brackets: the error must come at the 33rd, long before the end.
    let bomb = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
    let clock = ContinuousClock()
    var caught: JSONError?
    let elapsed = clock.measure {
        do { _ = try JSONParser.parse(bomb) } catch { caught = error as? JSONError }
    }
    #expect(caught?.message == "nesting deeper than 32 at line 1, column 33")
    #expect(caught?.offset == 32)
    #expect(elapsed < .seconds(1))
    // Objects count too, mixed with arrays.
    let mixed = String(repeating: #"{"a":["#, count: 20)
    #expect(throws: JSONError.self) { try JSONParser.parse(mixed) }
    do {
        _ = try JSONParser.parse(mixed)
    } catch {
        #expect(error.message.hasPrefix("nesting deeper than 32"))
    }
}

@Test func limitsAreConfigurable() {
    var limits = JSONParser.Limits()
    limits.maxDepth = 2
    #expect(throws: JSONError.self) { try JSONParser.parse("[[[]]]", limits: limits) }
    #expect((try? JSONParser.parse("[[]]", limits: limits)) != nil)

    limits = JSONParser.Limits()
    limits.maxStringBytes = 4
    #expect((try? JSONParser.parse(#""abcd""#, limits: limits)) != nil)
    expectMessage(#""abcde""#, limits: limits, contains: "string longer than 4 bytes at line 1, column 1")
    expectMessage(#"{"abcde":1}"#, limits: limits, contains: "string longer than 4 bytes at line 1, column 2")
    expectMessage(#""ab\ncde""#, limits: limits, contains: "string longer than 4 bytes")
    #expect((try? JSONParser.parse(#""\u00e9\u00e9""#, limits: limits)) != nil)

    limits = JSONParser.Limits()
    limits.maxNumberLength = 3
    #expect((try? JSONParser.parse("-12", limits: limits)) != nil)
    expectMessage("-123", limits: limits, contains: "number longer than 3 characters")

    // Without an exponent only a literal of over 300 digits can overflow a Double.
    limits = JSONParser.Limits()
    limits.maxNumberLength = 1_000
    #expect((try? JSONParser.parse(String(repeating: "9", count: 308) + ".5", limits: limits)) != nil)
    expectMessage(String(repeating: "9", count: 309) + ".5", limits: limits, contains: "number out of range")

    limits = JSONParser.Limits()
    limits.maxContainerCount = 3
    #expect((try? JSONParser.parse("[1,2,3]", limits: limits)) != nil)
    expectMessage("[1,2,3,4]", limits: limits, contains: "more than 3 elements in an array")
    expectMessage(#"{"a":1,"b":2,"c":3,"d":4}"#, limits: limits, contains: "more than 3 members in an object")
}

private func expectMessage(_ text: String, limits: JSONParser.Limits, contains expected: String,
                           sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        let value = try JSONParser.parse(text, limits: limits)
        Issue.record("parsed \(value) instead of failing", sourceLocation: sourceLocation)
    } catch {
        #expect(error.message.contains(expected), "got: \(error.message)", sourceLocation: sourceLocation)
    }
}

@Test func keysThatSwiftCallsEqualAreDistinctInJSON() throws {
    // U+00E9 and e + U+0301 are canonically equivalent (Swift's == says equal) but are two
    // different JSON keys, so this is not a duplicate.
    let value = try JSONParser.parse("{\"\u{E9}\":1,\"e\u{301}\":2}")
    let object = try #require(value.objectValue)
    #expect(object.count == 2)
    #expect(object["\u{E9}"] == 1)
    #expect(object["e\u{301}"] == 2)
}

@Test func keysDifferingInAnyByteAreDifferentKeys() throws {
    // Lengths around the 8-byte steps of the comparison, a difference at every position.
    for length in [1, 7, 8, 9, 16, 17, 40] {
        let key = String(repeating: "k", count: length)
        for position in 0..<length {
            var bytes = Array(key.utf8)
            bytes[position] = UInt8(ascii: "x")
            let other = String(decoding: bytes, as: UTF8.self)
            let object = try #require(try JSONParser.parse("{\"\(key)\":1,\"\(other)\":2}").objectValue)
            #expect(object[key] == 1 && object[other] == 2, "length \(length), position \(position)")
        }
    }
}
