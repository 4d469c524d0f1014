/// How a value travels as a parameter: libpq's text format (the server parses it as a literal of
/// the parameter's type), except bytes, sent in binary as `bytea`. Never spliced into SQL text.
enum ParameterEncoding {
    static let byteaOID: UInt32 = 17

    /// The bytes to send (nil for NULL), the type to declare (0: the server infers it from the
    /// statement) and the format (0 text, 1 binary).
    static func encode(_ value: PostgresValue, index: Int) throws(PostgresError) -> (bytes: [UInt8]?, type: UInt32, format: Int32) {
        switch value {
        case .null: return (nil, 0, 0)
        case .bytes(let bytes): return (bytes, byteaOID, 1)
        default: return (Array(try text(value, index: index).utf8), 0, 0)
        }
    }

    /// The text form of a non-NULL value, as the server's input functions read it.
    static func text(_ value: PostgresValue, index: Int) throws(PostgresError) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let integer): return String(integer)
        case .real(let real):
            if real.isNaN { return "NaN" }
            if real.isInfinite { return real < 0 ? "-Infinity" : "Infinity" }
            // Swift's description is the shortest text that reads back as the same double.
            return real.description
        case .boolean(let flag): return flag ? "true" : "false"
        case .bytes(let bytes): return "\\x" + bytes.map { hexDigits($0) }.joined()
        case .text(let text):
            // Text-format parameters are C strings: a NUL would silently cut the value short,
            // and PostgreSQL's text cannot hold U+0000 anyway. Refuse it as the server would.
            if text.utf8.contains(0) {
                throw PostgresError(sqlState: "22021", message: "text parameter \(index) contains U+0000, which PostgreSQL text cannot hold")
            }
            return text
        }
    }

    /// An array literal (`{"a","b\"c",NULL}`) of `elements`, for `$1::text[]` and the like: one
    /// parameter carrying a whole column of a batch insert (`unnest`).
    static func arrayLiteral(_ elements: [PostgresValue]) throws(PostgresError) -> String {
        var out = "{"
        for (offset, element) in elements.enumerated() {
            if offset > 0 { out += "," }
            if element.isNull { out += "NULL"; continue }
            out += "\""
            for scalar in try text(element, index: offset + 1).unicodeScalars {
                if scalar == "\"" || scalar == "\\" { out += "\\" }
                out.unicodeScalars.append(scalar)
            }
            out += "\""
        }
        return out + "}"
    }

    private static func hexDigits(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}

extension PostgresValue {
    /// One parameter holding an array of `elements` (NULLs allowed), sent as the text of an array
    /// literal: cast it in SQL (`$1::bigint[]`). A batch insert binds one per column and reads
    /// them back as rows with `unnest`, so a batch of any size is one statement with fixed text.
    public static func array(_ elements: [PostgresValue]) throws(PostgresError) -> PostgresValue {
        .text(try ParameterEncoding.arrayLiteral(elements))
    }
}
