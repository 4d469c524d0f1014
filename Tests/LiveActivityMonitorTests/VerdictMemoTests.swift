import JSON
import Testing
@testable import LiveActivityMonitor

/// The writer gives each structure of content one verdict per version of the shapes
/// (`VerdictMemo`, `ContentStructure`): what it gives again must be what the walk would say.
@Suite struct VerdictMemoTests {
    /// A content of a few keys from a small set, every kind, nested objects and arrays, so that
    /// structures repeat and differ by a key, a kind or an element.
    static func content(_ rng: inout DemoRandom, depth: Int = 0) -> JSONValue {
        var entries: [(String, JSONValue)] = []
        for key in ["eta", "name", "stops", "courier", "tip"] where rng.int(0...1) == 0 || key == "eta" {
            entries.append((key, value(&rng, depth: depth)))
        }
        if rng.int(0...3) == 0 { entries.reverse() }
        return .object(JSONObject(entries))
    }

    static func value(_ rng: inout DemoRandom, depth: Int) -> JSONValue {
        switch rng.int(0...(depth < 2 ? 6 : 4)) {
        case 0: return .null
        case 1: return .bool(rng.int(0...1) == 0)
        case 2: return JSONValue(rng.int(0...99))
        case 3, 4: return .string(String(rng.int(0...99)))
        case 5: return .array((0..<rng.int(0...2)).map { _ in value(&rng, depth: depth + 1) })
        default: return content(&rng, depth: depth + 1)
        }
    }

    static func reading(_ value: JSONValue) -> ContentReading {
        ContentReading(JSONText(value))
    }

    @Test func aVerdictGivenAgainIsTheWalksVerdict() {
        var rng = DemoRandom(seed: 35)
        var shapes = ContentShapes(judging: true)
        for _ in 0..<3 { shapes.learn(content: Self.content(&rng), of: "Delivery") }
        let contents = (0..<3000).map { _ in Self.content(&rng) }
        var judged = 0, refused = 0
        for round in 0..<2 {
            for content in contents {
                let given = shapes.verdict(on: Self.reading(content), of: "Delivery")
                #expect(given == shapes.verdict(on: content, of: "Delivery"), "round \(round): \(content)")
                judged += 1
                if given != nil { refused += 1 }
            }
        }
        // The contents both fit and do not, and share structures: the memo holds fewer than it judged.
        #expect(refused > 0 && refused < judged)
        #expect(shapes.memo.count > 10 && shapes.memo.count < contents.count)
    }

    @Test func aShapeThatChangesIsJudgedAfreshAndTheOldOneAsBefore() {
        var shapes = ContentShapes(judging: true)
        shapes.learn(content: ["eta": 7, "name": "Bo"], of: "Delivery")
        let push = Self.reading(["eta": "7", "name": "Al"])
        let before = shapes.verdict(on: push, of: "Delivery")
        #expect(before == "`eta`: string where the app sends a number")
        // A commit learns that `eta` may be a string; one rolled back keeps the shapes it had.
        let rolledBack = shapes
        shapes.learn(content: ["eta": "soon", "name": "Bo"], of: "Delivery")
        #expect(shapes.verdict(on: push, of: "Delivery") == nil)
        #expect(rolledBack.verdict(on: push, of: "Delivery") == before)
        #expect(shapes.verdict(on: push, of: "Delivery") == nil)
        // Another type, the same content: judged by its own shape (none yet: applied), even one
        // Swift calls equal but whose bytes differ (types are told apart by their bytes).
        #expect(shapes.verdict(on: push, of: "Timer") == nil)
        var spelled = ContentShapes(judging: true)
        spelled.learn(content: ["eta": 7], of: "Caf\u{e9}")
        #expect(spelled.verdict(on: push, of: "Caf\u{e9}") == "`eta`: string where the app sends a number")
        #expect(spelled.verdict(on: push, of: "Cafe\u{301}") == nil)
    }

    @Test func theStructureIsKeysKindsAndOrderNotValues() {
        func structure(_ value: JSONValue) -> [UInt8] { ContentStructure.of(value) }
        let content: JSONValue = ["a": 1, "b": "x", "c": [1, "y"]]
        #expect(structure(content) == structure(["a": 2.5, "b": "z", "c": [7, "w"]]))
        #expect(structure(content) != structure(["b": "x", "a": 1, "c": [1, "y"]]))
        #expect(structure(content) != structure(["a": "1", "b": "x", "c": [1, "y"]]))
        #expect(structure(content) != structure(["a": 1, "b": "x", "c": [1, "y", 2]]))
        #expect(structure(content) != structure(["a": 1, "b": "x", "c": ["y", 1]]))
        #expect(structure(content) != structure(["a": 1, "b": .null, "c": [1, "y"]]))
        #expect(structure(["ab": 1]) != structure(["a": ["b": 1]]))
        #expect(structure(["a": ["b": 1]]) != structure(["a": [["b": 1]]]))
    }
}
