import Testing
import JSON

@Test func numbersCompareByValue() throws {
    let a = try JSONParser.parse(#"{"progress":1.0}"#)
    let b = try JSONParser.parse(#"{"progress":1}"#)
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
    #expect(a.jsonString != b.jsonString)  // the literals themselves are kept
    #expect(JSONValue.number(JSONNumber(literal: "1e2")!) == 100)
    #expect(JSONValue.number(JSONNumber(literal: "0.50")!) == 0.5)
    #expect(JSONValue.number(JSONNumber(literal: "-0")!) == 0)
    #expect(Set<JSONValue>([1, 1.0, 100, try JSONParser.parse("1e2"), try JSONParser.parse("1.00")]).count == 2)
    #expect(JSONValue.number(JSONNumber(literal: "0.1")!) != JSONValue.number(JSONNumber(literal: "0.10000001")!))
}

@Test func objectsCompareIgnoringKeyOrder() throws {
    let a = try JSONParser.parse(#"{"a":1,"b":{"x":[1,2],"y":null}}"#)
    let b = try JSONParser.parse(#"{"b":{"y":null,"x":[1,2]},"a":1.0}"#)
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
    #expect(a != (try JSONParser.parse(#"{"a":1,"b":{"x":[2,1],"y":null}}"#)))  // arrays keep order
    #expect(a != (try JSONParser.parse(#"{"a":1}"#)))
    #expect(a != (try JSONParser.parse(#"{"a":1,"b":{"x":[1,2],"z":null}}"#)))
    #expect(a != (try JSONParser.parse(#"{"a":1,"b":{"x":[1,2],"y":false}}"#)))
    // Large objects (indexed) compare the same way.
    let keys = (0..<100).map { "k\($0)" }
    let forward = JSONObject(keys.map { ($0, JSONValue.string($0)) })
    let backward = JSONObject(keys.reversed().map { ($0, JSONValue.string($0)) })
    #expect(forward == backward)
    #expect(forward.hashValue == backward.hashValue)
    #expect(forward.keys == keys)
}

@Test func kindsNeverCompareEqualAcrossTypes() {
    let values: [JSONValue] = [.null, false, true, 0, 1, "", "1", "true", [], [.null], [:], ["a": .null]]
    for (i, a) in values.enumerated() {
        for (j, b) in values.enumerated() {
            #expect((a == b) == (i == j), "\(a) vs \(b)")
        }
    }
}

@Test func stringsCompareByExactCharacters() {
    // Swift calls these equal (canonical equivalence); JSON does not.
    #expect("\u{E9}" == "e\u{301}")
    #expect(JSONValue.string("\u{E9}") != JSONValue.string("e\u{301}"))
    #expect(Set<JSONValue>([.string("\u{E9}"), .string("e\u{301}")]).count == 2)
    #expect(JSONValue.string("abc") == JSONValue.string("abc"))
}

@Test func objectEditingKeepsOrder() {
    var object: JSONObject = ["b": 1, "a": 2]
    object["c"] = 3
    object["b"] = "changed"
    #expect(object.keys == ["b", "a", "c"])
    #expect(object["b"] == "changed")
    object["a"] = nil
    #expect(object.keys == ["b", "c"])
    #expect(object.removeValue(forKey: "b") == "changed")
    #expect(object.removeValue(forKey: "zzz") == nil)
    #expect(object.keys == ["c"])
    #expect(object.contains("c"))
    #expect(!object.isEmpty)
    #expect(object.count == 1)

    // Repeated keys when building: first position, last value.
    let built = JSONObject([("x", 1), ("y", 2), ("x", 3)])
    #expect(built.keys == ["x", "y"])
    #expect(built["x"] == 3)
    var edited = built
    edited.entries = [(key: "q", value: 1), (key: "q", value: 2), (key: "r", value: .null)]
    #expect(edited.keys == ["q", "r"])
    #expect(edited["q"] == 2)
    #expect(edited.values == [2, .null])
    #expect(Array(edited.map(\.key)) == ["q", "r"])

    // Growing past the index threshold and shrinking back keeps lookups right.
    var big = JSONObject()
    for n in 0..<40 { big["k\(n)"] = .number(JSONNumber(n)) }
    for n in stride(from: 0, to: 40, by: 2) { big["k\(n)"] = nil }
    #expect(big.count == 20)
    #expect(big["k1"] == 1)
    #expect(big["k2"] == nil)
    #expect(big["k39"] == 39)
    #expect(big.keys.first == "k1")
}
