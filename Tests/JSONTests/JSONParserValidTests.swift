import Testing
import JSON

/// Valid input and its expected compact re-serialization.
struct ValidCase: Sendable, CustomTestStringConvertible {
    let input: String
    let output: String
    init(_ input: String, _ output: String? = nil) {
        self.input = input
        self.output = output ?? input
    }
    var testDescription: String { input.count > 40 ? String(input.prefix(40)) + "…" : input }
}

let validCases: [ValidCase] = [
    // Numbers keep their literal exactly.
    ValidCase(#"{"a":0.50}"#),
    ValidCase("7"),
    ValidCase("-0"),
    ValidCase("-0.0"),
    ValidCase("0"),
    ValidCase("1E+2"),
    ValidCase("1e-2"),
    ValidCase("0.1e10"),
    ValidCase("-12.340e-005"),
    ValidCase("1.7976931348623157e308"),
    ValidCase("5e-324"),
    ValidCase("1e-999"),  // underflows to zero, accepted
    ValidCase("123456789012345678901234567890"),
    ValidCase("[9223372036854775807,-9223372036854775808,18446744073709551616]"),
    // Literals and empty containers.
    ValidCase("true"), ValidCase("false"), ValidCase("null"), ValidCase("[]"), ValidCase("{}"),
    ValidCase("[[],{},[{}]]"),
    // Whitespace is only SP, TAB, LF, CR and is dropped.
    ValidCase(" \t\r\n [ 1 , 2 ,\n3 ] \n", "[1,2,3]"),
    ValidCase("{ \"a\" : [ true , false , null ] }", #"{"a":[true,false,null]}"#),
    // Strings: escapes decoded, written back minimally (and HTML-safe).
    ValidCase(#""plain""#),
    ValidCase(#""""#),
    ValidCase(#""\u00e9\u00E9""#, #""éé""#),
    ValidCase(#""\ud83d\ude00""#, #""😀""#),
    ValidCase(#""\"\\\/\b\f\n\r\t""#, #""\"\\/\b\f\n\r\t""#),
    ValidCase(#""\u0000\u001f\u007f""#, "\"\\u0000\\u001f\u{7F}\""),
    ValidCase(#""<b>&""#, #""\u003cb\u003e\u0026""#),
    ValidCase(#""a\u2028b\u2029c""#),
    ValidCase("\"héllo € 𝄞 \u{2028}\"", #""héllo € 𝄞 \u2028""#),
    ValidCase(#""x\/y""#, #""x/y""#),
    // Key order is kept.
    ValidCase(#"{"z":1,"a":2,"m":[{"k":null,"b":"x"}]}"#),
    ValidCase(#"{"driverName":"Ana","rating":"4.9","progress":0.4,"duration":7}"#),
    // Keys are only compared after unescaping, and these differ.
    ValidCase(#"{"a":1,"A":2,"\u00e9":3,"é\u0301":4}"#, #"{"a":1,"A":2,"é":3,"é́":4}"#),
]

@Test("valid input parses and writes back compact, literals preserved", arguments: validCases)
func validInputRoundTrips(_ testCase: ValidCase) throws {
    let value = try JSONParser.parse(testCase.input)
    #expect(value.jsonString == testCase.output)
    let again = try JSONParser.parse(value.jsonString)
    #expect(again == value)
    #expect(again.jsonString == testCase.output)
}

@Test func parsesFromBytesAndBuffer() throws {
    let bytes = Array(#"{"a":[1,"two",3.0]}"#.utf8)
    let fromArray = try JSONParser.parse(bytes)
    let fromBuffer = try bytes.withUnsafeBytes { buffer in try JSONParser.parse(buffer) }
    #expect(fromArray == fromBuffer)
    #expect(fromArray["a"]?[1]?.stringValue == "two")
    #expect(fromArray["a"]?[2]?.int64Value == 3)
    #expect(fromArray["a"]?[3] == nil)
}

@Test func accessorsReturnValuesOfTheirOwnKindOnly() throws {
    let value = try JSONParser.parse(#"{"s":"x","n":-42,"d":0.25,"b":true,"z":null,"a":[1],"o":{"k":"v"}}"#)
    #expect(value["s"]?.stringValue == "x")
    #expect(value["n"]?.int64Value == -42)
    #expect(value["n"]?.doubleValue == -42)
    #expect(value["d"]?.doubleValue == 0.25)
    #expect(value["d"]?.int64Value == nil)
    #expect(value["d"]?.numberValue?.literal == "0.25")
    #expect(value["b"]?.boolValue == true)
    #expect(value["z"]?.isNull == true)
    #expect(value["s"]?.isNull == false)
    #expect(value["a"]?.arrayValue == [1])
    #expect(value["o"]?.objectValue?["k"] == "v")
    #expect(value["missing"] == nil)
    #expect(value["s"]?.int64Value == nil)
    #expect(value["n"]?.stringValue == nil)
    #expect(value["b"]?["k"] == nil)
    #expect(value.objectValue?.keys == ["s", "n", "d", "b", "z", "a", "o"])
}

@Test func nestingUpToTheLimitIsAccepted() throws {
    let depth = JSONParser.Limits().maxDepth
    let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    let value = try JSONParser.parse(text)
    #expect(value.jsonString == text)
}

@Test func deepNestingWithARaisedLimitNeedsNoRecursion() throws {
    // 3,000 levels would overflow a recursive parser's frames on a small thread stack; the
    // iterative parser only grows a heap array. (Writing and destroying such a value are
    // recursive, so the depth stays moderate.)
    var limits = JSONParser.Limits()
    limits.maxDepth = 3_000
    let text = String(repeating: "[", count: 3_000) + String(repeating: "]", count: 3_000)
    var value = try JSONParser.parse(text, limits: limits)
    var depth = 0
    while case .array(let elements) = value {
        depth += 1
        guard let first = elements.first else { break }
        value = first
    }
    #expect(depth == 3_000)
}

@Test func stringsAtTheSizeLimitAreAccepted() throws {
    let limit = JSONParser.Limits().maxStringBytes
    let plain = "\"" + String(repeating: "a", count: limit) + "\""
    #expect(try JSONParser.parse(plain).stringValue?.utf8.count == limit)
    // Escapes count after decoding: 6 bytes of input, 1 of string.
    let escaped = "\"" + String(repeating: "\\u0041", count: limit) + "\""
    #expect(try JSONParser.parse(escaped).stringValue?.utf8.count == limit)
}

@Test func largeObjectsKeepOrderAndFindEveryKey() throws {
    let keys = (0..<500).map { "key\($0 * 7919 % 500)" }
    let text = "{" + keys.enumerated().map { "\"\($1)\":\($0)" }.joined(separator: ",") + "}"
    let value = try JSONParser.parse(text)
    let object = try #require(value.objectValue)
    #expect(object.keys == keys)
    for (position, key) in keys.enumerated() {
        #expect(object[key]?.int64Value == Int64(position))
    }
    #expect(value.jsonString == text)
}
