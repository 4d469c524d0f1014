/// An append-only writer of compact JSON for API responses.
///
/// Write a whole ``JSONValue``, or stream a document without building one:
///
///     var writer = JSONWriter()
///     writer.beginObject()
///     writer.key("accepted"); writer.number(3)
///     writer.key("errors"); writer.beginArray(); writer.endArray()
///     writer.endObject()
///     // writer.string == #"{"accepted":3,"errors":[]}"#
///
/// Commas and colons are placed automatically. Strings escape `"`, `\`, every control
/// character, and also `<`, `>`, `&`, U+2028 and U+2029 (as `\u003c`, `\u003e`, `\u0026`,
/// `\u2028`, `\u2029`), so the output can never be read as HTML or break out of a `<script>`
/// block. Several top-level values are separated by a newline, which makes NDJSON.
///
/// Misuse (a value in an object without a key, closing what is not open) is a programming
/// error and stops the program.
public struct JSONWriter {
    /// The UTF-8 output so far.
    public var bytes: [UInt8]

    /// One entry per open container: `true` for an object.
    private var openObjects: [Bool] = []
    /// Whether the innermost container (or the top level) already holds a value.
    private var hasValue = false
    /// Whether a key was written and its value is due.
    private var keyPending = false

    /// An empty writer.
    public init() {
        bytes = []
        bytes.reserveCapacity(256)
    }

    /// An empty writer whose buffer starts with room for `capacity` bytes.
    public init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The output so far as a string.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Whether every container opened has been closed (and no key awaits its value).
    public var isComplete: Bool { openObjects.isEmpty && !keyPending }

    // MARK: Values

    /// Writes a whole value at the current position.
    public mutating func write(_ value: JSONValue) {
        willWriteValue()
        append(value)
    }

    /// Writes a whole value at the current position; the same as ``write(_:)``, named for
    /// use among the streaming calls.
    public mutating func raw(_ value: JSONValue) {
        write(value)
    }

    /// Writes a value given as its JSON text, or `null` for `nil`.
    public mutating func write(_ value: JSONText?) {
        willWriteValue()
        if let value { bytes.append(contentsOf: value.text.utf8) } else { appendNull() }
    }

    /// Writes a string, or `null` for `nil`.
    public mutating func string(_ value: String?) {
        willWriteValue()
        if let value { appendString(value) } else { appendNull() }
    }

    /// Writes a number in its shortest round-trip form (as `JSONNumber(_: Double)` writes it);
    /// `nil`, NaN and infinities become `null`, as JSON has no way to say them.
    public mutating func number(_ value: Double?) {
        willWriteValue()
        if let value, value.isFinite {
            bytes.append(contentsOf: JSONNumber(value).literal.utf8)
        } else {
            appendNull()
        }
    }

    /// Writes an integer, or `null` for `nil`.
    public mutating func number(_ value: Int64?) {
        willWriteValue()
        if let value { bytes.append(contentsOf: String(value).utf8) } else { appendNull() }
    }

    /// Writes an integer, or `null` for `nil`.
    public mutating func number(_ value: Int?) {
        willWriteValue()
        if let value { bytes.append(contentsOf: String(value).utf8) } else { appendNull() }
    }

    /// Writes a number exactly as its literal, or `null` for `nil`.
    public mutating func number(_ value: JSONNumber?) {
        willWriteValue()
        if let value { bytes.append(contentsOf: value.literal.utf8) } else { appendNull() }
    }

    /// Writes `true` or `false`, or `null` for `nil`.
    public mutating func bool(_ value: Bool?) {
        willWriteValue()
        if let value { appendBool(value) } else { appendNull() }
    }

    /// Writes `null`.
    public mutating func null() {
        willWriteValue()
        appendNull()
    }

    // MARK: Containers

    /// Opens an object; follow with ``key(_:)`` and a value per member, then ``endObject()``.
    public mutating func beginObject() {
        willWriteValue()
        bytes.append(UInt8(ascii: "{"))
        openObjects.append(true)
        hasValue = false
    }

    /// Closes the innermost object.
    public mutating func endObject() {
        precondition(openObjects.last == true, "endObject() without an open object")
        precondition(!keyPending, "endObject() after a key with no value")
        openObjects.removeLast()
        bytes.append(UInt8(ascii: "}"))
        hasValue = true
    }

    /// Opens an array; follow with its values, then ``endArray()``.
    public mutating func beginArray() {
        willWriteValue()
        bytes.append(UInt8(ascii: "["))
        openObjects.append(false)
        hasValue = false
    }

    /// Closes the innermost array.
    public mutating func endArray() {
        precondition(openObjects.last == false, "endArray() without an open array")
        openObjects.removeLast()
        bytes.append(UInt8(ascii: "]"))
        hasValue = true
    }

    /// Writes a member name in the innermost object; the next value written is its value.
    public mutating func key(_ key: String) {
        precondition(openObjects.last == true, "key(_:) outside an object")
        precondition(!keyPending, "key(_:) after a key with no value")
        if hasValue { bytes.append(UInt8(ascii: ",")) }
        appendString(key)
        bytes.append(UInt8(ascii: ":"))
        keyPending = true
    }

    /// Places the separator a new value needs and checks it is allowed here.
    private mutating func willWriteValue() {
        if let inObject = openObjects.last {
            if inObject {
                precondition(keyPending, "a value in an object needs key(_:) first")
                keyPending = false
                hasValue = true
                return
            }
            if hasValue { bytes.append(UInt8(ascii: ",")) }
        } else if hasValue {
            bytes.append(0x0A)
        }
        hasValue = true
    }

    // MARK: Output

    /// Writes `value` with no separator handling (the caller placed it).
    private mutating func append(_ value: JSONValue) {
        switch value {
        case .null:
            appendNull()
        case .bool(let value):
            appendBool(value)
        case .number(let number):
            bytes.append(contentsOf: number.literal.utf8)
        case .string(let string):
            appendString(string)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                append(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in object {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                appendString(key)
                bytes.append(UInt8(ascii: ":"))
                append(value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private mutating func appendNull() {
        appendStatic("null")
    }

    private mutating func appendBool(_ value: Bool) {
        appendStatic(value ? "true" : "false")
    }

    /// Appends constant text without building an array or string for it.
    @inline(__always)
    private mutating func appendStatic(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// True for a byte that `appendString` may replace with an escape (0xE2 starts U+2028 and
    /// U+2029, which are escaped; other characters it starts are not).
    /// Below 64 a bit mask decides (one shift for most digits and punctuation, instead of a
    /// chain of comparisons run for every byte written).
    /// The table of bytes below 64 is `JSONGrammar.writerEscapesBelow64`, which readers that
    /// must know what the writer leaves unchanged use too.
    @inline(__always)
    static func mayEscape(_ byte: UInt8) -> Bool {
        if byte < 64 { return (JSONGrammar.writerEscapesBelow64 >> UInt64(byte)) & 1 != 0 }
        return byte == 0x5C || byte == 0xE2
    }

    /// True when `string` is written between quotes exactly as it is, so that a caller may
    /// splice `"` + string + `"` into JSON text without a writer.
    public static func isVerbatim(_ string: String) -> Bool {
        !string.utf8.contains(where: mayEscape)
    }

    /// Writes `string` quoted and escaped, copying runs of safe bytes in one go.
    private mutating func appendString(_ string: String) {
        var string = string
        bytes.append(UInt8(ascii: "\""))
        string.withUTF8 { utf8 in
            let count = utf8.count
            var runStart = 0
            var p = 0
            while p < count {
                let byte = utf8[p]
                guard Self.mayEscape(byte) else {
                    p += 1
                    continue
                }
                let replacement: StaticString
                switch byte {
                case 0x22: replacement = "\\\""
                case 0x5C: replacement = "\\\\"
                case 0x0A: replacement = "\\n"
                case 0x0D: replacement = "\\r"
                case 0x09: replacement = "\\t"
                case 0x08: replacement = "\\b"
                case 0x0C: replacement = "\\f"
                case 0x3C: replacement = "\\u003c"
                case 0x3E: replacement = "\\u003e"
                case 0x26: replacement = "\\u0026"
                case 0x00..<0x20:
                    flush(utf8, from: runStart, to: p)
                    let hexDigits: StaticString = "0123456789abcdef"
                    appendStatic("\\u00")
                    bytes.append(hexDigits.utf8Start[Int(byte >> 4)])
                    bytes.append(hexDigits.utf8Start[Int(byte & 0x0F)])
                    p += 1
                    runStart = p
                    continue
                case 0xE2 where p + 2 < count && utf8[p + 1] == 0x80 && (utf8[p + 2] == 0xA8 || utf8[p + 2] == 0xA9):
                    // U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR end a JavaScript line.
                    flush(utf8, from: runStart, to: p)
                    appendStatic(utf8[p + 2] == 0xA8 ? "\\u2028" : "\\u2029")
                    p += 3
                    runStart = p
                    continue
                default:
                    p += 1
                    continue
                }
                flush(utf8, from: runStart, to: p)
                appendStatic(replacement)
                p += 1
                runStart = p
            }
            flush(utf8, from: runStart, to: count)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func flush(_ utf8: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) {
        if end > start { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<end])) }
    }
}
