import Glibc

/// An activity or booking id as a record keeps it: a UUID in its usual text form (36
/// characters, hex digits in one case and dashes at 8, 13, 18 and 23: ActivityKit's activity
/// ids, and most backends' booking ids) as the 16 bytes it spells and its case, any other id as
/// its String. A 36-character String does not fit a String's 15 inline bytes: each took a heap
/// block of 80 bytes, two a record (docs/ARCHITECTURE.md, "What one record costs").
///
/// Each id has one form (a text id is never UUID-shaped), so that `==` and the hash are those of
/// the ids' text: no character outside ASCII is canonically equivalent to a hex digit or a dash,
/// so a String equal to a UUID-shaped one is that same text.
enum CompactID: Sendable, Hashable {
    case lowerUUID(UInt64, UInt64)
    case upperUUID(UInt64, UInt64)
    case text(String)

    init(_ id: String) {
        var id = id
        self = id.withUTF8 { Self.uuid($0) } ?? .text(id)
    }

    /// The same from UTF-8 bytes (a row's column, read in place): a String is made only for an
    /// id that is not UUID-shaped.
    init(utf8 bytes: UnsafeRawBufferPointer) {
        self = Self.uuid(bytes.assumingMemoryBound(to: UInt8.self))
            ?? .text(String(decoding: bytes, as: UTF8.self))
    }

    /// The dashes' places in a UUID's text.
    private static func isDash(_ i: Int) -> Bool { i == 8 || i == 13 || i == 18 || i == 23 }

    /// The UUID `bytes` spell in one case; nil for any other text. Digits alone read as lower case.
    private static func uuid(_ bytes: UnsafeBufferPointer<UInt8>) -> CompactID? {
        guard bytes.count == 36 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0, nibbles = 0
        var lower = false, upper = false
        for i in 0..<36 {
            let byte = bytes[i]
            if Self.isDash(i) {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10; lower = true
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = byte - UInt8(ascii: "A") + 10; upper = true
            default: return nil
            }
            if nibbles < 16 { high = high << 4 | UInt64(nibble) } else { low = low << 4 | UInt64(nibble) }
            nibbles += 1
        }
        if lower && upper { return nil }
        return upper ? .upperUUID(high, low) : .lowerUUID(high, low)
    }

    var string: String {
        switch self {
        case .text(let text): return text
        case .lowerUUID, .upperUUID: return withUTF8 { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Its text's UTF-8 bytes: a UUID's written on the stack, a text's read in place.
    func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let (high, low, letter): (UInt64, UInt64, UInt8)
        switch self {
        case .text(var text): return text.withUTF8(body)
        case .lowerUUID(let h, let l): (high, low, letter) = (h, l, UInt8(ascii: "a"))
        case .upperUUID(let h, let l): (high, low, letter) = (h, l, UInt8(ascii: "A"))
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { out in
            var nibble = 0
            for i in 0..<36 {
                if Self.isDash(i) {
                    out[i] = UInt8(ascii: "-")
                    continue
                }
                let word = nibble < 16 ? high : low
                let value = UInt8(truncatingIfNeeded: word >> (60 - 4 * UInt64(nibble % 16))) & 0x0f
                out[i] = value < 10 ? UInt8(ascii: "0") + value : letter + value - 10
                nibble += 1
            }
            return body(UnsafeBufferPointer(out))
        }
    }

    /// The order of the ids' text by `<` on strings (the phone order's and triage's tie-break):
    /// two UUIDs of one case by their bytes' numbers, which order as their digits do.
    static func < (a: CompactID, b: CompactID) -> Bool {
        switch (a, b) {
        case let (.lowerUUID(ah, al), .lowerUUID(bh, bl)), let (.upperUUID(ah, al), .upperUUID(bh, bl)):
            return (ah, al) < (bh, bl)
        default:
            return a.string < b.string
        }
    }

    /// The order of the ids' UTF-8 bytes (memcmp), as `byteOrder(_:_:)` of their text, -1, 0 or 1.
    static func byteOrder(_ a: CompactID, _ b: CompactID) -> Int {
        switch (a, b) {
        case let (.lowerUUID(ah, al), .lowerUUID(bh, bl)), let (.upperUUID(ah, al), .upperUUID(bh, bl)):
            return (ah, al) == (bh, bl) ? 0 : ((ah, al) < (bh, bl) ? -1 : 1)
        default:
            return a.withUTF8 { pa in b.withUTF8 { pb in byteOrder(pa, pb) } }
        }
    }

    /// Byte order of `pa` and `pb` (memcmp, the shorter first where one is the other's prefix);
    /// with `prefix`, of `pa`'s first `pb.count` bytes and `pb` (0: `pb` is a prefix of `pa`).
    static func byteOrder(_ pa: UnsafeBufferPointer<UInt8>, _ pb: UnsafeBufferPointer<UInt8>, prefix: Bool = false) -> Int {
        let n = Swift.min(pa.count, pb.count)
        if n > 0 {
            let c = memcmp(pa.baseAddress!, pb.baseAddress!, n)
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        if prefix, pa.count >= pb.count { return 0 }
        return pa.count == pb.count ? 0 : (pa.count < pb.count ? -1 : 1)
    }
}
