import JSON

/// What a content-state's verdict depends on (`ObjectShape.problems`): its keys in order, the
/// JSON kind of each value, and the same of every nested object and array element; never a
/// string's or a number's value. Contents of one structure get one verdict from one set of
/// shapes, so the writer works it out once (`VerdictMemo`). Made where the content is read
/// (`ContentReading`), off the writer.
///
/// The bytes, depth first: a kind tag per value; an array's or object's count after its tag;
/// each key as its UTF-8 length and bytes before its value. Counts and lengths are LEB128, so no
/// two structures share their bytes.
enum ContentStructure {
    static func of(_ value: JSONValue) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        write(value, into: &bytes)
        return bytes
    }

    private static func write(_ value: JSONValue, into bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(0)
        case .bool: bytes.append(1)
        case .number: bytes.append(2)
        case .string: bytes.append(3)
        case .array(let values):
            bytes.append(4)
            append(values.count, to: &bytes)
            for value in values { write(value, into: &bytes) }
        case .object(let object):
            bytes.append(5)
            append(object.count, to: &bytes)
            for (key, member) in object {
                append(key.utf8.count, to: &bytes)
                bytes.append(contentsOf: key.utf8)
                write(member, into: &bytes)
            }
        }
    }

    private static func append(_ count: Int, to bytes: inout [UInt8]) {
        var rest = UInt(count)
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}
