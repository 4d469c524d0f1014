import JSON

/// Builds random JSON values from a seeded generator, biased toward what breaks writers and
/// parsers: escapes, HTML characters, line separators, non-BMP scalars, odd number literals.
struct RandomJSON {
    var generator: SeededGenerator

    init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    mutating func value(depth: Int = 0) -> JSONValue {
        let kind = Int.random(in: 0..<(depth >= 4 ? 4 : 6), using: &generator)
        switch kind {
        case 0: return Bool.random(using: &generator) ? .null : .bool(Bool.random(using: &generator))
        case 1: return .number(number())
        case 2, 3: return .string(string())
        case 4:
            return .array((0..<Int.random(in: 0..<6, using: &generator)).map { _ in value(depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0..<7, using: &generator) {
                object[string(maxLength: 6)] = value(depth: depth + 1)
            }
            return .object(object)
        }
    }

    mutating func number() -> JSONNumber {
        switch Int.random(in: 0..<4, using: &generator) {
        case 0:
            return JSONNumber(Int64.random(in: .min ... .max, using: &generator))
        case 1:
            // Any finite Double, from its bits.
            var double: Double
            repeat {
                double = Double(bitPattern: UInt64.random(in: 0 ... .max, using: &generator))
            } while !double.isFinite
            return JSONNumber(double)
        case 2:
            return JSONNumber(Double(Int.random(in: -10_000...10_000, using: &generator)) / 100)
        default:
            // A literal in a style Swift would never print.
            let sign = Bool.random(using: &generator) ? "-" : ""
            let whole = Bool.random(using: &generator) ? "0" : String(Int.random(in: 1...99_999, using: &generator))
            let fraction = Bool.random(using: &generator) ? "." + String(Int.random(in: 0...999, using: &generator)) + "0" : ""
            let exponent = Bool.random(using: &generator)
                ? ["e", "E"].randomElement(using: &generator)! + ["", "+", "-"].randomElement(using: &generator)!
                    + String(Int.random(in: 0...300, using: &generator))
                : ""
            return JSONNumber(literal: sign + whole + fraction + exponent)!
        }
    }

    mutating func string(maxLength: Int = 12) -> String {
        let pool: [Unicode.Scalar] = [
            "a", "Z", "0", " ", "\"", "\\", "/", "<", ">", "&", "'", "\u{0}", "\u{8}", "\n", "\r", "\t",
            "\u{1F}", "\u{7F}", "é", "\u{301}", "€", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{FFFF}",
            "😀", "\u{10FFFF}", "\u{E000}",
        ]
        var string = ""
        for _ in 0..<Int.random(in: 0...maxLength, using: &generator) {
            if Int.random(in: 0..<4, using: &generator) == 0 {
                string.unicodeScalars.append(pool.randomElement(using: &generator)!)
            } else {
                // Any scalar outside the surrogate range.
                let value = UInt32.random(in: 0...0x10FFFF, using: &generator)
                string.unicodeScalars.append(Unicode.Scalar(value) ?? "x")
            }
        }
        return string
    }
}
