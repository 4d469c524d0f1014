import JSON
import Prometheus

/// A content-state's identity as DESIGN.md section 4 compares contents: canonical JSON (object
/// keys sorted by their bytes, numbers compared as numbers, strings by their bytes), hashed with
/// 64-bit FNV-1a. Stable across processes (it is stored with the activity), unlike `Hasher`.
enum ContentDigest {
    /// The digest of a content object's text; nil if it does not parse (stored text always does).
    static func of(_ content: JSONText?) -> UInt64? {
        guard let content, let value = try? JSONParser.parse(content.text) else { return nil }
        return of(value)
    }

    /// The digest of a content already parsed.
    static func of(_ value: JSONValue) -> UInt64 {
        var hash = FNV()
        write(value, into: &hash)
        return hash.value
    }

    private struct FNV {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        mutating func add(_ byte: UInt8) {
            value ^= UInt64(byte)
            value = value &* 0x100_0000_01b3
        }
        mutating func add<S: Sequence>(_ bytes: S) where S.Element == UInt8 { for b in bytes { add(b) } }
        /// A string's UTF-8 from its contiguous storage: its `utf8` view walked byte by byte,
        /// and keys compared so, were most of a push's digest (callgrind, PERFORMANCE.md,
        /// session 36). The same bytes either way.
        mutating func add(utf8 text: String) {
            var text = text
            text.withUTF8 { add($0) }
        }
        /// A length before variable text, so that no two sequences of parts hash as one.
        mutating func add(count: Int) { withUnsafeBytes(of: UInt64(count).littleEndian) { add($0) } }
    }

    private static func write(_ value: JSONValue, into h: inout FNV) {
        switch value {
        case .null: h.add(0)
        case .bool(let b): h.add(b ? 2 : 1)
        case .number(let n):
            h.add(3)
            // As numbers: 7, 7.0 and 7e0 are one value (-0 is 0).
            let d = n.doubleValue == 0 ? 0 : n.doubleValue
            withUnsafeBytes(of: d.bitPattern.littleEndian) { h.add($0) }
        case .string(let s):
            h.add(4); h.add(count: s.utf8.count); h.add(utf8: s)
        case .array(let items):
            h.add(5); h.add(count: items.count)
            for item in items { write(item, into: &h) }
        case .object(let object):
            h.add(6); h.add(count: object.count)
            // Members in key order, through their positions sorted on the stack: a sorted copy
            // of the members was an allocation for every push the writer applies.
            let entries = object.entries
            withUnsafeTemporaryAllocation(of: Int.self, capacity: entries.count) { buffer in
                var order = buffer
                for i in 0..<entries.count { order.initializeElement(at: i, to: i) }
                order.sort { ExactText.precedes(entries[$0].key, entries[$1].key) }
                for i in order {
                    h.add(count: entries[i].key.utf8.count); h.add(utf8: entries[i].key)
                    write(entries[i].value, into: &h)
                }
            }
        }
    }
}
