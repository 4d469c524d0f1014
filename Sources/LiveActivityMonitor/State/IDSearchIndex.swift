import Glibc

/// The live activities' ids and booking ids, lowercased and kept in byte order, for `?q=`
/// (prefix and exact match, any case): a search finds its matches by a binary search and a walk
/// over the matches alone, instead of lowercasing two ids per live activity.
///
/// Kept by `ActivityTable` as records come and go (so it holds exactly the table's records),
/// in `SortedChunks` (an insertion or a removal moves at most one chunk's entries). A reader walks
/// it in bounded slices (`entries(withPrefix:after:max:)`), each under the state lock for a few
/// hundred entries, so that no search holds the writer or a scrape for its whole length
/// (ARCHITECTURE.md, "Search").
struct IDSearchIndex: Sendable {
    /// Entries are ordered by bytes (`less`), not `<` on strings (canonical equivalence).
    struct Entry: ChunkOrdered {
        /// The lowercased activity id or booking id.
        var key: String
        /// The activity it leads to.
        var activityID: String
        /// Whether `key` is the activity's booking id (otherwise its own id).
        var isBooking: Bool

        static func ordered(_ a: Entry, _ b: Entry) -> Bool { IDSearchIndex.less(a, b) }
    }

    private var sorted = SortedChunks<Entry>()
    var count: Int { sorted.count }

    /// The key `id` is searched by: lowercased, sharing `id`'s storage when it is already so.
    static func key(_ id: String) -> String {
        // Most ids are ASCII without capitals: their key is the id itself, known without making
        // a lowercased copy (start-up makes two million keys).
        let asIs = id.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains { $0 >= 0x80 || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
        }
        if asIs == true { return id }
        let lowered = id.lowercased()
        return lowered == id ? id : lowered
    }

    /// Whether `id` matches the search `q` (already lowercased): `q` is a prefix of the
    /// lowercased id's bytes (an exact match is the longest prefix). The list's rule, for records
    /// the index does not hold (dismissed ones, read from the database).
    static func matches(_ id: String, _ q: String) -> Bool {
        hasPrefix(key(id), q)
    }

    init() {}

    /// The index of `count` activities (distinct ids), activity `i`'s ids given by `ids(i)`, made at
    /// once: every entry made, sorted in one go and cut into chunks, instead of an insertion (a
    /// binary search and a move) per entry.
    ///
    /// Start-up's peak memory is set here (a million live activities: two million entries), so
    /// the sort's numbers are cut to the entries' places before the chunks are made, and each
    /// entry is moved into its chunk, not copied (no reference counted string retained).
    init(count: Int, ids: (Int) -> (activityID: String, bookingID: String?)) {
        let entries = UnsafeMutableBufferPointer<Entry>.allocate(capacity: 2 * count)
        // Every entry is moved into a chunk before this.
        defer { entries.deallocate() }
        var made = 0
        func make(_ entry: Entry) {
            (entries.baseAddress! + made).initialize(to: entry)
            made += 1
        }
        for i in 0..<count {
            let (id, booking) = ids(i)
            make(Entry(key: Self.key(id), activityID: id, isBooking: false))
            if let booking { make(Entry(key: Self.key(booking), activityID: id, isBooking: true)) }
        }
        // Sorted by the keys' first 16 bytes as two numbers (one comparison of integers, no
        // string touched), by the whole entry only where those are equal.
        var order = (0..<made).map { SortKey(entries[$0].key, Int32(truncatingIfNeeded: $0)) }
        order.sort { a, b in
            a.head != b.head ? a.head < b.head : a.tail != b.tail ? a.tail < b.tail
                : Self.less(entries[Int(a.entry)], entries[Int(b.entry)])
        }
        let places = order.map(\.entry)
        order = []
        sorted = SortedChunks(count: made) { (entries.baseAddress! + Int(places[$0])).move() }
    }

    /// An entry's place in the bulk sort: its key's first 16 bytes, big-endian (so that the
    /// numbers order as the bytes do; a shorter key is padded with zeros, and ties are broken
    /// by the whole entry), and where it is.
    private struct SortKey {
        var head: UInt64 = 0
        var tail: UInt64 = 0
        var entry: Int32

        init(_ key: String, _ entry: Int32) {
            self.entry = entry
            var key = key
            key.withUTF8 { bytes in
                // Eight bytes a number, zeros past the key's end.
                func word(_ from: Int) -> UInt64 {
                    var word: UInt64 = 0
                    for i in from..<from + 8 { word = word << 8 | (i < bytes.count ? UInt64(bytes[i]) : 0) }
                    return word
                }
                head = word(0)
                tail = word(8)
            }
        }
    }

    mutating func insert(activityID: String, bookingID: String?) {
        sorted.insert(Entry(key: Self.key(activityID), activityID: activityID, isBooking: false))
        if let bookingID { sorted.insert(Entry(key: Self.key(bookingID), activityID: activityID, isBooking: true)) }
    }

    mutating func remove(activityID: String, bookingID: String?) {
        sorted.remove(Entry(key: Self.key(activityID), activityID: activityID, isBooking: false))
        if let bookingID { sorted.remove(Entry(key: Self.key(bookingID), activityID: activityID, isBooking: true)) }
    }

    /// Up to `max` entries whose key starts with `q` (lowercased), in order, after `after`
    /// (exclusive; from the first when nil). Fewer than `max` means there are no more.
    func entries(withPrefix q: String, after: Entry?, max: Int) -> [Entry] {
        let start = Entry(key: q, activityID: "", isBooking: false)
        var p = if let after {
            sorted.firstPosition { !Self.less(after, $0) }
        } else {
            sorted.firstPosition { Self.less($0, start) }
        }
        var out: [Entry] = []
        while out.count < max, let e = sorted[p], Self.hasPrefix(e.key, q) {
            out.append(e)
            p = sorted.position(after: p)
        }
        return out
    }

    /// Every entry, in order (tests).
    var all: [Entry] { sorted.all }

    /// Entry order: key bytes, then activity id bytes, then the activity's own id first.
    static func less(_ a: Entry, _ b: Entry) -> Bool {
        let k = compare(a.key, b.key)
        if k != 0 { return k < 0 }
        let i = compare(a.activityID, b.activityID)
        if i != 0 { return i < 0 }
        return !a.isBooking && b.isBooking
    }

    /// Byte order (memcmp), which keeps every key with a given byte prefix together.
    static func compare(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { pa in
            b.withUTF8 { pb in
                let n = Swift.min(pa.count, pb.count)
                if n > 0 {
                    let c = memcmp(pa.baseAddress!, pb.baseAddress!, n)
                    if c != 0 { return c < 0 ? -1 : 1 }
                }
                return pa.count == pb.count ? 0 : (pa.count < pb.count ? -1 : 1)
            }
        }
    }

    static func hasPrefix(_ s: String, _ prefix: String) -> Bool {
        var s = s, prefix = prefix
        return s.withUTF8 { ps in
            prefix.withUTF8 { pp in
                pp.count <= ps.count && (pp.count == 0 || memcmp(ps.baseAddress!, pp.baseAddress!, pp.count) == 0)
            }
        }
    }
}
