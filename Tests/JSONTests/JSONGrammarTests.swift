import Testing
@testable import JSON

/// `JSONGrammar` is what a one-pass reader outside this module relies on to take exactly what
/// the parser takes and the writer writes back unchanged: checked here against the parser and
/// the writer themselves, on random bytes.
struct JSONGrammarTests {
    /// Bytes from which random string contents are drawn: ASCII, every special byte, and the
    /// pieces of valid and invalid UTF-8 (U+2028 among them).
    static let alphabet: [[UInt8]] = [
        [0x61], [0x20], [0x22], [0x5C], [0x26], [0x3C], [0x3E], [0x2F], [0x00], [0x1F], [0x7F],
        [0xC3, 0xA9], [0xE2, 0x80, 0xA8], [0xE2, 0x80, 0xA9], [0xE2, 0x80, 0xA6], [0xF0, 0x9F, 0x9A, 0x95],
        [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xC3], [0xE2, 0x82], [0xFF],
    ]

    /// Content without escapes is verbatim (a plain run to the end under `.writer`, valid UTF-8
    /// without U+2028/U+2029) exactly when the parser takes it as a string and the writer writes
    /// that string back as the same bytes.
    @Test func verbatimContentIsWhatTheParserTakesAndTheWriterKeeps() throws {
        var generator = SeededGenerator(seed: 0x6A55_0001)
        for _ in 0..<20_000 {
            var content: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                content += Self.alphabet.randomElement(using: &generator)!
            }
            let verbatim = content.withUnsafeBytes { raw in
                JSONGrammar.plainRun(raw, from: 0, to: raw.count, stops: .writer).position == raw.count
                    && JSONGrammar.isVerbatimUTF8(raw, from: 0, to: raw.count)
            }
            let document = [UInt8(ascii: "\"")] + content + [UInt8(ascii: "\"")]
            let keeps: Bool
            if case .string? = try? JSONParser.parse(document) {
                keeps = (try JSONParser.parse(document)).jsonBytes == document
            } else {
                keeps = false
            }
            if content.contains(0x5C) {
                // An escape may come back the same (`\"`, `\\`), but the run stops at it: a
                // scanner relying on the grammar declines escapes.
                #expect(!verbatim, "\(content)")
            } else {
                #expect(verbatim == keeps, "\(content)")
            }
        }
    }

    /// `numberLiteral` takes what the parser takes as a whole number, and nothing else.
    @Test func numberLiteralsAreWhatTheParserTakes() {
        var generator = SeededGenerator(seed: 0x6A55_0002)
        let pieces: [String] = ["-", "0", "1", "9", ".", "e", "E", "+", "-", "00", "5", "x"]
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 1...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let bytes = Array(text.utf8)
            guard bytes.first == UInt8(ascii: "-") || JSONGrammar.isDigit(bytes[0]) else { continue }
            let whole = bytes.withUnsafeBytes { raw -> Bool in
                guard case .success(let literal) = JSONGrammar.numberLiteral(raw, from: 0, to: raw.count) else { return false }
                return literal.end == raw.count
            }
            var limits = JSONParser.Limits()
            limits.maxNumberLength = .max
            let parsed: Bool
            if case .number? = try? JSONParser.parse(bytes, limits: limits) { parsed = true } else { parsed = false }
            // The parser also refuses literals whose Double is infinite, which the grammar allows.
            if parsed { #expect(whole, "\(text)") }
            if whole, !parsed { #expect(Double(text)?.isFinite == false, "\(text)") }
        }
    }

    /// Plain integers read as `Int64(String)` reads them.
    @Test func plainIntegersReadAsTheStandardLibraryReadsThem() {
        var generator = SeededGenerator(seed: 0x6A55_0003)
        for _ in 0..<20_000 {
            let digits = Int.random(in: 1...20, using: &generator)
            var text = String(Int.random(in: 1...9, using: &generator))
            for _ in 1..<digits { text += String(Int.random(in: 0...9, using: &generator)) }
            if Bool.random(using: &generator) { text = "-" + text }
            let read = Array(text.utf8).withUnsafeBytes { JSONGrammar.plainInteger($0, from: 0, to: $0.count) }
            if digits <= 18 {
                #expect(read == Int(text), "\(text)")
            } else {
                #expect(read == nil, "\(text)")
            }
        }
        for text in ["", "-", "1.0", "1e2", "+1", "0x1", "1 "] {
            #expect(Array(text.utf8).withUnsafeBytes { JSONGrammar.plainInteger($0, from: 0, to: $0.count) } == nil, "\(text)")
        }
    }
}
