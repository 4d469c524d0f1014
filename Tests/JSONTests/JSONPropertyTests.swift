import Testing
import JSON

@Test func randomValuesRoundTripThroughWriterAndParser() throws {
    var random = RandomJSON(seed: 0x5EED_0001)
    for _ in 0..<3_000 {
        let value = random.value()
        let bytes = value.jsonBytes
        let parsed = try JSONParser.parse(bytes)
        #expect(parsed == value, "\(value.jsonString)")
        // Literals and key order survive, so writing again gives the same bytes.
        #expect(parsed.jsonBytes == bytes)
        #expect(!bytes.contains(UInt8(ascii: "<")) && !bytes.contains(UInt8(ascii: ">")) && !bytes.contains(UInt8(ascii: "&")))
        #expect(!bytes.contains { $0 < 0x20 })
    }
}

@Test func mutatedInputNeverCrashesAndErrorsPointInside() throws {
    // Flip, insert and delete bytes in valid documents: every outcome must be a value that
    // writes back and parses again, or a JSONError positioned inside the input.
    var random = RandomJSON(seed: 0x5EED_0002)
    var generator = SeededGenerator(seed: 0x5EED_0003)
    let interesting: [UInt8] = [0x00, 0x0A, 0x22, 0x5C, 0x2C, 0x3A, 0x5B, 0x5D, 0x7B, 0x7D, 0x80, 0xBF, 0xC0, 0xE2, 0xED, 0xF4, 0xFF, 0x30, 0x2D, 0x65]
    var rejected = 0
    for _ in 0..<3_000 {
        var bytes = random.value().jsonBytes
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            let position = Int.random(in: 0...bytes.count, using: &generator)
            let byte = Bool.random(using: &generator) ? interesting.randomElement(using: &generator)! : UInt8.random(in: 0...255, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0 where position < bytes.count: bytes[position] = byte
            case 1 where position < bytes.count: bytes.remove(at: position)
            default: bytes.insert(byte, at: position)
            }
        }
        do {
            let value = try JSONParser.parse(bytes)
            #expect(try JSONParser.parse(value.jsonBytes) == value)
        } catch {
            rejected += 1
            #expect(error.offset >= 0 && error.offset <= bytes.count, "\(error)")
            #expect(error.line >= 1 && error.column >= 1)
            #expect(error.message.contains("at line \(error.line), column \(error.column)") || error.message.contains("at byte \(error.offset)"))
        }
    }
    // Most single-byte damage must be caught; a parser that accepted anything would fail here.
    #expect(rejected > 1_500)
}
