/// A strict RFC 8259 parser for untrusted input.
///
/// Rejects what the RFC does not allow (trailing commas, comments, `NaN`/`Infinity`, leading
/// zeros, single quotes, whitespace other than space/tab/LF/CR, a byte order mark), raw
/// control characters in strings, invalid UTF-8 (overlong forms, encoded surrogates, values
/// above U+10FFFF, truncated sequences), lone `\u` surrogates, numbers whose `Double` is
/// infinite, and duplicate keys. Every error carries a precise position (``JSONError``).
///
/// The parser is iterative: nesting is checked against ``Limits/maxDepth`` before a container
/// is entered, so a million-deep `[[[[…` fails at once, whatever the stack size.
/// Number literals and key order are preserved (``JSONNumber``, ``JSONObject``).
/// A number that underflows (`1e-999`) is accepted and reads as zero.
public struct JSONParser {
    /// Bounds that keep hostile input cheap to reject.
    public struct Limits: Sendable, Hashable {
        /// Maximum nesting of arrays and objects; a top-level container is depth 1.
        public var maxDepth = 32
        /// Maximum length of one string (member names included), in UTF-8 bytes after
        /// unescaping.
        public var maxStringBytes = 64 * 1024
        /// Maximum length of one number literal, in characters.
        public var maxNumberLength = 64
        /// Maximum number of elements in one array or members in one object.
        public var maxContainerCount = 100_000

        public init() {}
    }

    /// Parses one JSON text: a single value with only whitespace around it.
    public static func parse(_ bytes: UnsafeRawBufferPointer, limits: Limits = .init()) throws(JSONError) -> JSONValue {
        var reader = JSONReader(buffer: bytes, limits: limits)
        return try reader.readDocument(from: 0, to: bytes.count, line: 1)
    }

    /// Parses one JSON text from UTF-8 bytes.
    public static func parse(_ bytes: [UInt8], limits: Limits = .init()) throws(JSONError) -> JSONValue {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONError) -> JSONValue in try parse(buffer, limits: limits) }
        }
        return try result.get()
    }

    /// Parses one JSON text from a string (its UTF-8 form).
    public static func parse(_ string: String, limits: Limits = .init()) throws(JSONError) -> JSONValue {
        var string = string
        let result = string.withUTF8 { buffer in
            Result { () throws(JSONError) -> JSONValue in try parse(UnsafeRawBufferPointer(buffer), limits: limits) }
        }
        return try result.get()
    }

    /// Parses NDJSON: one value per line. Lines end with LF or CRLF; blank lines (only
    /// whitespace) are skipped, so a trailing newline adds nothing. Each element pairs the
    /// 1-based line number with that line's value or error; errors report their position in
    /// the whole input (line number, column within the line, byte offset from the start).
    /// `firstLine` numbers the input's first line: a part of a larger file keeps the file's numbers.
    public static func parseLines(_ bytes: UnsafeRawBufferPointer, limits: Limits = .init(),
                                  firstLine: Int = 1) -> [(line: Int, result: Result<JSONValue, JSONError>)] {
        parseLines(bytes, limits: limits, firstLine: firstLine, unlessTaken: { _ in false }).map { ($0.line, $0.result!) }
    }

    /// Parses NDJSON as `parseLines` does, but first offers each non-blank line to `take`: its
    /// bytes' range in `bytes`, without the line feed and a carriage return before it. A line
    /// that `take` takes (true) is not parsed: its result is nil. This lets a caller read the
    /// lines it knows in a way of its own and leave the rest, errors included, to the parser.
    public static func parseLines(_ bytes: UnsafeRawBufferPointer, limits: Limits = .init(), firstLine: Int = 1,
                                  unlessTaken take: (Range<Int>) -> Bool) -> [(line: Int, result: Result<JSONValue, JSONError>?)] {
        var reader = JSONReader(buffer: bytes, limits: limits)
        var results: [(line: Int, result: Result<JSONValue, JSONError>?)] = []
        var lineStart = 0
        var lineNumber = firstLine
        let count = bytes.count
        while lineStart < count {
            let lineEnd = JSONReader.nextNewline(in: bytes, from: lineStart)
            var contentEnd = lineEnd
            if contentEnd > lineStart, bytes[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            if !JSONReader.isBlank(bytes, from: lineStart, to: contentEnd) {
                if take(lineStart..<contentEnd) {
                    results.append((line: lineNumber, result: nil))
                } else {
                    let result = Result { () throws(JSONError) -> JSONValue in
                        try reader.readDocument(from: lineStart, to: contentEnd, line: lineNumber)
                    }
                    results.append((line: lineNumber, result: result))
                }
            }
            lineStart = lineEnd + 1
            lineNumber += 1
        }
        return results
    }

    /// Parses NDJSON from UTF-8 bytes, as the `UnsafeRawBufferPointer` overload does.
    public static func parseLines(_ bytes: [UInt8], limits: Limits = .init(),
                                  firstLine: Int = 1) -> [(line: Int, result: Result<JSONValue, JSONError>)] {
        bytes.withUnsafeBytes { parseLines($0, limits: limits, firstLine: firstLine) }
    }
}
