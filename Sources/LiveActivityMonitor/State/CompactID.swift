import Glibc
import Prometheus

/// An activity or booking id as a record keeps it: a UUID in its usual text form (36
/// characters, hex digits in one case and dashes at 8, 13, 18 and 23: ActivityKit's activity
/// ids, and many backends' booking ids) as the 16 bytes it spells and its case, any other id as
/// its String. A 36-character String does not fit a String's 15 inline bytes: each took a heap
/// block of about 80 bytes, two a record (docs/ARCHITECTURE.md, "What one record costs").
///
/// Each id has one form (a text id is never UUID-shaped), so that `==`, the hash and `<` are those
/// of the ids' bytes, as the tables compare them: a text id compares by its bytes (`ExactText`),
/// not by `String ==`, which calls canonically equivalent spellings ("ñ", "n" and U+0303) one
/// id where the tables hold two.
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

    /// Each byte as a hex digit: its value in the low 4 bits, 0x10 for a lower-case letter, 0x20
    /// for an upper-case one, 0x80 for a byte that is no hex digit. Read by table, not by
    /// branches: a random UUID's digits and letters mispredicted a branch every few bytes, and
    /// start-up reads two million ids (PERFORMANCE.md, session 32).
    private static let hexDigits: [UInt8] = (0...255).map { (byte: Int) -> UInt8 in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): (UInt8(byte) - UInt8(ascii: "a") + 10) | 0x10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): (UInt8(byte) - UInt8(ascii: "A") + 10) | 0x20
        default: 0x80
        }
    }

    /// The UUID `bytes` spell in one case; nil for any other text. Digits alone read as lower case.
    private static func uuid(_ bytes: UnsafeBufferPointer<UInt8>) -> CompactID? {
        let dash = UInt8(ascii: "-")
        guard bytes.count == 36, let p = bytes.baseAddress, p[8] == dash, p[13] == dash, p[18] == dash, p[23] == dash
        else { return nil }
        return hexDigits.withUnsafeBufferPointer { table in
            var seen: UInt8 = 0, high: UInt64 = 0, low: UInt64 = 0
            func read(_ places: Range<Int>, into word: inout UInt64) {
                for i in places {
                    let digit = table[Int(p[i])]
                    seen |= digit
                    word = word << 4 | UInt64(digit & 0x0F)
                }
            }
            read(0..<8, into: &high); read(9..<13, into: &high); read(14..<18, into: &high)
            read(19..<23, into: &low); read(24..<36, into: &low)
            guard seen & 0x80 == 0, seen & 0x30 != 0x30 else { return nil }
            return seen & 0x20 != 0 ? .upperUUID(high, low) : .lowerUUID(high, low)
        }
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
            // A digit past 9 is a letter: `letter - ":"` more than the digits' run (no branch).
            let past9 = letter &- UInt8(ascii: ":")
            func write(_ places: Range<Int>, _ word: UInt64, from nibble: Int) {
                for (k, i) in places.enumerated() {
                    let value = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * (nibble + k))) & 0x0F
                    out[i] = UInt8(ascii: "0") &+ value &+ ((9 &- value) >> 7) &* past9
                }
            }
            write(0..<8, high, from: 0); write(9..<13, high, from: 8); write(14..<18, high, from: 12)
            write(19..<23, low, from: 0); write(24..<36, low, from: 4)
            (out[8], out[13], out[18], out[23]) = (UInt8(ascii: "-"), UInt8(ascii: "-"), UInt8(ascii: "-"), UInt8(ascii: "-"))
            return body(UnsafeBufferPointer(out))
        }
    }

    static func == (a: CompactID, b: CompactID) -> Bool {
        switch (a, b) {
        case let (.lowerUUID(ah, al), .lowerUUID(bh, bl)), let (.upperUUID(ah, al), .upperUUID(bh, bl)):
            return (ah, al) == (bh, bl)
        case let (.text(x), .text(y)):
            return ExactText.equal(x, y)
        default:
            return false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .lowerUUID(let h, let l): hasher.combine(0 as UInt8); hasher.combine(h); hasher.combine(l)
        case .upperUUID(let h, let l): hasher.combine(1 as UInt8); hasher.combine(h); hasher.combine(l)
        case .text(let text): hasher.combine(2 as UInt8); ExactText.hash(text, into: &hasher)
        }
    }

    /// The order of the ids' bytes (the phone order's and triage's tie-break, as SQL's `ORDER BY`
    /// on the ids): two UUIDs of one case by their bytes' numbers, which order as their digits do.
    static func < (a: CompactID, b: CompactID) -> Bool {
        switch (a, b) {
        case let (.lowerUUID(ah, al), .lowerUUID(bh, bl)), let (.upperUUID(ah, al), .upperUUID(bh, bl)):
            return (ah, al) < (bh, bl)
        default:
            return byteOrder(a, b) < 0
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
