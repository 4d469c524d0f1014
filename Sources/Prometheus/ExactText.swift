import Glibc

/// Text compared by its bytes. Swift's `String ==` calls canonically equivalent spellings equal
/// ("é" and "e\u{301}"); as label values they are two series to Prometheus, so a label set, a
/// stored series key or a label slot that holds free text compares through here.
public enum ExactText {
    @inline(__always)
    public static func equal(_ a: String, _ b: String) -> Bool {
        // The same storage, as interned strings share, is equal at once.
        // memcmp: the generic element loop cost a tenth of a second per million at start-up.
        inPlace(a, b) { x, y in
            x.count == y.count && (x.baseAddress == y.baseAddress || x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
        } ?? a.utf8.elementsEqual(b.utf8)
    }

    /// Whether `a` is present and has `b`'s bytes.
    @inline(__always)
    public static func equal(_ a: String?, _ b: String) -> Bool { a.map { equal($0, b) } ?? false }

    /// UTF-8 byte order, which is code point order. By memcmp in place, as `equal`: the view's
    /// element loop was most of sorting a content's keys for its digest.
    @inline(__always)
    public static func precedes(_ a: String, _ b: String) -> Bool {
        inPlace(a, b) { x, y in
            let common = min(x.count, y.count)
            let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
            return order != 0 ? order < 0 : x.count < y.count
        } ?? a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// `body` over both strings' UTF-8 in place (the UTF-8 view's iterator is far slower); nil
    /// when either has no contiguous storage.
    @inline(__always)
    private static func inPlace<R>(_ a: String, _ b: String,
                                   _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> R) -> R? {
        let result = a.utf8.withContiguousStorageIfAvailable { x in b.utf8.withContiguousStorageIfAvailable { y in body(x, y) } }
        return result ?? nil
    }

    public static func hash(_ text: String, into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(text.utf8.count)
    }

    /// Each element equal by bytes.
    public static func equal(_ a: [String], _ b: [String]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { equal($0, $1) }
    }
}

/// A string that is equal to another only when their bytes are, and ordered by them: a key for
/// sets and dictionaries of free text (attributes types, ids).
public struct ExactString: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let text: String
    public init(_ text: String) { self.text = text }
    public static func == (a: ExactString, b: ExactString) -> Bool { ExactText.equal(a.text, b.text) }
    public static func < (a: ExactString, b: ExactString) -> Bool { ExactText.precedes(a.text, b.text) }
    public func hash(into hasher: inout Hasher) { ExactText.hash(text, into: &hasher) }
    public var description: String { text }
}
