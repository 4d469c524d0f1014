import Testing
import JSON

@Test func writerNeverEmitsHTMLSyntax() throws {
    let hostile = "<img src=x onerror=alert(1)></script><script>&amp;"
    let output = JSONValue.object(["html": .string(hostile)]).jsonString
    #expect(output == #"{"html":"\u003cimg src=x onerror=alert(1)\u003e\u003c/script\u003e\u003cscript\u003e\u0026amp;"}"#)
    #expect(!output.contains("<"))
    #expect(!output.contains(">"))
    #expect(!output.contains("&"))
    #expect(try JSONParser.parse(output)["html"]?.stringValue == hostile)

    // Keys are escaped the same way.
    var writer = JSONWriter()
    writer.beginObject()
    writer.key("<k>")
    writer.string("v")
    writer.endObject()
    #expect(writer.string == #"{"\u003ck\u003e":"v"}"#)
}

@Test func writerEscapesEveryControlCharacterAndLineSeparator() throws {
    var all = ""
    for scalar in 0..<0x20 { all.unicodeScalars.append(Unicode.Scalar(UInt8(scalar))) }
    all += "\"\\/\u{7F}\u{2028}\u{2029}é😀"
    let output = JSONValue.string(all).jsonBytes
    #expect(!output.contains { $0 < 0x20 })
    let text = String(decoding: output, as: UTF8.self)
    #expect(text.hasPrefix(#""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e"#))
    #expect(text.hasSuffix(#"\u001f\"\\/"# + "\u{7F}" + #"\u2028\u2029é😀""#))
    #expect(!text.unicodeScalars.contains("\u{2028}"))
    #expect(!text.unicodeScalars.contains("\u{2029}"))
    #expect(try JSONParser.parse(output).stringValue == all)
    // A lone E2 byte sequence that is not U+2028/2029 passes untouched.
    #expect(JSONValue.string("\u{2027}\u{202A}→").jsonString == "\"\u{2027}\u{202A}→\"")
}

@Test func streamingWriterPlacesSeparators() {
    var writer = JSONWriter()
    writer.beginObject()
    writer.key("accepted"); writer.number(3)
    writer.key("duplicates"); writer.number(0 as Int64)
    writer.key("latency"); writer.number(42.5)
    writer.key("whole"); writer.number(7.0)
    writer.key("nan"); writer.number(Double.nan)
    writer.key("inf"); writer.number(-Double.infinity)
    writer.key("missing"); writer.string(nil)
    writer.key("noNumber"); writer.number(nil as Double?)
    writer.key("flag"); writer.bool(true)
    writer.key("maybe"); writer.bool(nil)
    writer.key("nothing"); writer.null()
    writer.key("literal"); writer.number(JSONNumber(literal: "0.50"))
    writer.key("errors")
    writer.beginArray()
    writer.beginObject()
    writer.key("index"); writer.number(Int64.min)
    writer.key("error"); writer.string("bad \"type\"")
    writer.endObject()
    writer.beginArray(); writer.endArray()
    writer.beginObject(); writer.endObject()
    writer.raw(["state": ["progress": 0.4, "eta": 7]])
    writer.string("x")
    writer.endArray()
    writer.endObject()
    #expect(writer.isComplete)
    #expect(writer.string == #"{"accepted":3,"duplicates":0,"latency":42.5,"whole":7,"nan":null,"inf":null,"missing":null,"noNumber":null,"flag":true,"maybe":null,"nothing":null,"literal":0.50,"errors":[{"index":-9223372036854775808,"error":"bad \"type\""},[],{},{"state":{"progress":0.4,"eta":7}},"x"]}"#)
    #expect(writer.bytes == Array(writer.string.utf8))
}

@Test func topLevelValuesAreSeparatedByNewlines() {
    var writer = JSONWriter(capacity: 64)
    writer.write(["a": 1])
    writer.beginArray(); writer.number(1); writer.endArray()
    writer.string("s")
    #expect(writer.string == "{\"a\":1}\n[1]\n\"s\"")
    #expect(JSONParser.parseLines(writer.bytes).count == 3)
}

@Test func writerIsIncompleteUntilClosed() {
    var writer = JSONWriter()
    #expect(writer.isComplete)
    writer.beginObject()
    #expect(!writer.isComplete)
    writer.key("a")
    #expect(!writer.isComplete)
    writer.number(1)
    writer.endObject()
    #expect(writer.isComplete)
}

@Test func numbersAreWrittenAsTheirLiteral() throws {
    let text = #"[0.50,7,1E+2,-0.0,1e-7,123456789012345678901234567890]"#
    #expect(try JSONParser.parse(text).jsonString == text)
    #expect(JSONValue.number(JSONNumber(0.1 + 0.2)).jsonString == "0.30000000000000004")
    #expect(JSONValue.array([1, 2.5, "x", true, .null]).jsonString == #"[1,2.5,"x",true,null]"#)
    #expect(JSONValue.object([:]).jsonString == "{}")
    #expect("\(JSONValue.object(["a": [1]]))" == #"{"a":[1]}"#)
}

/// `isVerbatim` lets callers splice a string into JSON text without a writer: it must never
/// say so of a string the writer would change.
@Suite struct JSONWriterVerbatimTests {
    @Test func verbatimStringsAreWrittenUnchanged() {
        var samples = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        samples += ["BK-1042", "", "é", "€", "\u{2028}", "\u{2029}", "a\u{2028}b", "日本", "😀", "x&y", "tab\there"]
        for s in samples {
            let written = JSONValue.string(s).jsonString
            if JSONWriter.isVerbatim(s) {
                #expect(written == "\"" + s + "\"", "\(Array(s.utf8))")
            }
        }
        #expect(JSONWriter.isVerbatim("BK-1042"))
        #expect(!JSONWriter.isVerbatim("a\"b") && !JSONWriter.isVerbatim("<") && !JSONWriter.isVerbatim("\u{2028}"))
    }
}
