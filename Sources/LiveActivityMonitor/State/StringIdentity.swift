/// A string's identity: its two words, read in place (no retain, no hashing). Equal words are
/// the same string, its storage shared or the same small string held inline; different words
/// may still spell the same bytes. Start-up's passes over every record (`ActivityTable`'s
/// interning and its count by type) tell the few shared types apart so, instead of comparing,
/// hashing or retaining a string per record.
struct StringIdentity: Equatable {
    private let first: UInt64
    private let second: UInt64

    /// Of the `String` or `String?` at `field` (both are two words; `String?`'s nil is one value).
    init(at field: UnsafeRawPointer) {
        first = field.load(as: UInt64.self)
        second = field.load(fromByteOffset: 8, as: UInt64.self)
    }

    /// Of `s` (a copy of a string has its words).
    init(of s: String?) {
        var s = s
        self = withUnsafeBytes(of: &s) { StringIdentity(at: $0.baseAddress!) }
    }
}
