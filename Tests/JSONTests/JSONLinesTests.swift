import Testing
import JSON

@Test func ndjsonSkipsBlankLinesAndHandlesCRLF() throws {
    let text = "{\"a\":1}\r\n\r\n  \t\n[2]\n bad\n{\"b\":\"\\u00e9\"}\r\n\"last\""
    let bytes = Array(text.utf8)
    let results = JSONParser.parseLines(bytes)
    #expect(results.map(\.line) == [1, 4, 5, 6, 7])
    #expect(try results[0].result.get() == ["a": 1])
    #expect(try results[1].result.get() == [2])
    #expect(try results[3].result.get() == ["b": "é"])
    #expect(try results[4].result.get() == "last")

    // The error is positioned in the whole batch: line 5, column 2, absolute byte offset.
    guard case .failure(let error) = results[2].result else {
        Issue.record("line 5 should fail")
        return
    }
    #expect(error.message == "unexpected 'b' at line 5, column 2; expected a value")
    #expect(error.line == 5)
    #expect(error.column == 2)
    #expect(bytes[error.offset] == UInt8(ascii: "b"))
}

@Test func ndjsonEdgeCases() throws {
    #expect(JSONParser.parseLines([]).isEmpty)
    #expect(JSONParser.parseLines(Array("\n\r\n\n".utf8)).isEmpty)
    // A trailing newline adds no entry, and its absence loses none.
    #expect(JSONParser.parseLines(Array("1\n2\n".utf8)).map(\.line) == [1, 2])
    #expect(JSONParser.parseLines(Array("1\n2".utf8)).map(\.line) == [1, 2])
    // A value cannot span lines: each half is its own (broken) document.
    let split = JSONParser.parseLines(Array("[1,\n2]".utf8))
    #expect(split.count == 2)
    for entry in split {
        guard case .failure = entry.result else {
            Issue.record("line \(entry.line) should fail")
            continue
        }
    }
    // Errors on one line leave the others intact, and each line has its own limits.
    let lines = ["[" + String(repeating: "[", count: 40), #"{"ok":true}"#, #"{"a":1,"a":2}"#, "\"\u{7F}\""]
    let results = JSONParser.parseLines(Array(lines.joined(separator: "\n").utf8))
    #expect(results.count == 4)
    #expect(throws: JSONError.self) { try results[0].result.get() }
    #expect(try results[1].result.get() == ["ok": true])
    #expect(throws: JSONError.self) { try results[2].result.get() }
    #expect(try results[3].result.get() == "\u{7F}")
    // A lone CR inside a line is ordinary whitespace.
    #expect(try JSONParser.parseLines(Array("[1,\r2]".utf8)).first?.result.get() == [1, 2])
}

@Test func ndjsonFromBufferMatchesArray() throws {
    let bytes = Array("{\"x\":1}\n{\"y\":[true,null]}\n".utf8)
    let viaBuffer = bytes.withUnsafeBytes { JSONParser.parseLines($0) }
    let viaArray = JSONParser.parseLines(bytes)
    #expect(viaBuffer.count == 2)
    for (a, b) in zip(viaBuffer, viaArray) {
        #expect(a.line == b.line)
        #expect(try a.result.get() == b.result.get())
    }
}
