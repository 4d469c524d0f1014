/// A string compared and hashed by its exact UTF-8 bytes, as JSON compares member names and
/// strings (RFC 8259 §8.3).
///
/// Swift's `String` equality is canonical equivalence, under which `"\u00e9"` and `"e\u0301"`
/// are equal; in JSON they are different keys, and an object may hold both.
struct JSONKey: Hashable {
    let string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: JSONKey, rhs: JSONKey) -> Bool {
        same(lhs.string, rhs.string)
    }

    func hash(into hasher: inout Hasher) {
        Self.hash(string, into: &hasher)
    }

    /// Whether two strings have the same bytes: compared in place for native strings (every
    /// parsed key); otherwise `==` first, because it is fast and, when it says no, the bytes
    /// differ too. (Walking both UTF-8 views after `==` cost a visible share of decoding.)
    @inline(__always)
    static func same(_ lhs: String, _ rhs: String) -> Bool {
        let inPlace = lhs.utf8.withContiguousStorageIfAvailable { l in
            rhs.utf8.withContiguousStorageIfAvailable { r in bytesEqual(l, r) }
        }
        if let inPlace, let result = inPlace { return result }
        return lhs == rhs && lhs.utf8.elementsEqual(rhs.utf8)
    }

    @inline(__always)
    static func bytesEqual(_ l: UnsafeBufferPointer<UInt8>, _ r: UnsafeBufferPointer<UInt8>) -> Bool {
        guard l.count == r.count else { return false }
        guard let lp = l.baseAddress, let rp = r.baseAddress else { return true }
        return JSONGrammar.sameBytes(lp, rp, count: l.count)
    }

    /// Hashes the exact bytes of `string` (and its length, so concatenations differ).
    static func hash(_ string: String, into hasher: inout Hasher) {
        var string = string
        string.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(string.utf8.count)
    }
}
