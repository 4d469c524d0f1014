import Glibc

/// The live activities' ids and booking ids, lowercased and kept in byte order, for `?q=`
/// (prefix and exact match, any case): a search finds its matches by a binary search and a walk
/// over the matches alone, instead of lowercasing two ids per live activity.
///
/// Kept by `ActivityTable` as records come and go (so it holds exactly the table's records),
/// in chunks of at most `maxChunk` entries: an insertion or a removal moves at most one chunk's
/// entries (a sorted array of 400,000 entries moved megabytes per new activity). A reader walks
/// it in bounded slices (`entries(withPrefix:after:max:)`), each under the state lock for a few
/// hundred entries, so that no search holds the writer or a scrape for its whole length
/// (ARCHITECTURE.md, "Search").
struct IDSearchIndex: Sendable {
    /// Compare entries with `same`, by bytes (not `==` on strings: canonical equivalence).
    struct Entry: Sendable {
        /// The lowercased activity id or booking id.
        var key: String
        /// The activity it leads to.
        var activityID: String
        /// Whether `key` is the activity's booking id (otherwise its own id).
        var isBooking: Bool
    }

    static let maxChunk = 512
    private var chunks: [[Entry]] = []
    private(set) var count = 0

    /// The key `id` is searched by: lowercased, sharing `id`'s storage when it is already so.
    static func key(_ id: String) -> String {
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
    init(count: Int, ids: (Int) -> (activityID: String, bookingID: String?)) {
        var entries: [Entry] = []
        entries.reserveCapacity(2 * count)
        for i in 0..<count {
            let (id, booking) = ids(i)
            entries.append(Entry(key: Self.key(id), activityID: id, isBooking: false))
            if let booking { entries.append(Entry(key: Self.key(booking), activityID: id, isBooking: true)) }
        }
        // Sorted by the keys' first 16 bytes as two numbers (one comparison of integers, no
        // string touched), by the whole entry only where those are equal.
        var order = entries.indices.map { SortKey(entries[$0].key, Int32(truncatingIfNeeded: $0)) }
        entries.withUnsafeBufferPointer { entries in
            order.sort { a, b in
                a.head != b.head ? a.head < b.head : a.tail != b.tail ? a.tail < b.tail
                    : Self.less(entries[Int(a.entry)], entries[Int(b.entry)])
            }
        }
        // Three quarters full: the first insertions after start-up split no chunk.
        let size = Self.maxChunk * 3 / 4
        chunks.reserveCapacity((order.count + size - 1) / size)
        var start = 0
        while start < order.count {
            let end = Swift.min(start + size, order.count)
            chunks.append(order[start..<end].map { entries[Int($0.entry)] })
            start = end
        }
        self.count = order.count
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
                for (i, byte) in bytes.prefix(16).enumerated() {
                    if i < 8 { head |= UInt64(byte) << (56 - 8 * i) } else { tail |= UInt64(byte) << (56 - 8 * (i - 8)) }
                }
            }
        }
    }

    mutating func insert(activityID: String, bookingID: String?) {
        insert(Entry(key: Self.key(activityID), activityID: activityID, isBooking: false))
        if let bookingID { insert(Entry(key: Self.key(bookingID), activityID: activityID, isBooking: true)) }
    }

    mutating func remove(activityID: String, bookingID: String?) {
        remove(Entry(key: Self.key(activityID), activityID: activityID, isBooking: false))
        if let bookingID { remove(Entry(key: Self.key(bookingID), activityID: activityID, isBooking: true)) }
    }

    /// Up to `max` entries whose key starts with `q` (lowercased), in order, after `after`
    /// (exclusive; from the first when nil). Fewer than `max` means there are no more.
    func entries(withPrefix q: String, after: Entry?, max: Int) -> [Entry] {
        let start = after ?? Entry(key: q, activityID: "", isBooking: false)
        var c = chunkIndex(for: start)
        guard c < chunks.count else { return [] }
        var i = Self.lowerBound(start, in: chunks[c], strictly: after != nil)
        var out: [Entry] = []
        while out.count < max, c < chunks.count {
            if i == chunks[c].count { c += 1; i = 0; continue }
            guard Self.hasPrefix(chunks[c][i].key, q) else { break }
            out.append(chunks[c][i])
            i += 1
        }
        return out
    }

    /// Every entry, in order (tests).
    var all: [Entry] { chunks.flatMap { $0 } }

    private mutating func insert(_ e: Entry) {
        if chunks.isEmpty { chunks = [[e]]; count = 1; return }
        let c = Swift.min(chunkIndex(for: e), chunks.count - 1)
        let i = Self.lowerBound(e, in: chunks[c], strictly: false)
        if i < chunks[c].count, Self.same(chunks[c][i], e) { return }
        chunks[c].insert(e, at: i)
        count += 1
        if chunks[c].count > Self.maxChunk {
            let upper = Array(chunks[c][(Self.maxChunk / 2)...])
            chunks[c].removeSubrange((Self.maxChunk / 2)...)
            chunks.insert(upper, at: c + 1)
        }
    }

    private mutating func remove(_ e: Entry) {
        let c = chunkIndex(for: e)
        guard c < chunks.count else { return }
        let i = Self.lowerBound(e, in: chunks[c], strictly: false)
        guard i < chunks[c].count, Self.same(chunks[c][i], e) else { return }
        chunks[c].remove(at: i)
        count -= 1
        if chunks[c].isEmpty { chunks.remove(at: c) }
    }

    /// The first chunk whose last entry is not before `e` (`chunks.count` when none is).
    private func chunkIndex(for e: Entry) -> Int {
        var lo = 0, hi = chunks.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if Self.less(chunks[mid][chunks[mid].count - 1], e) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The first position in `chunk` not before `e` (after `e` when `strictly`).
    private static func lowerBound(_ e: Entry, in chunk: [Entry], strictly: Bool) -> Int {
        var lo = 0, hi = chunk.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if less(chunk[mid], e) || (strictly && same(chunk[mid], e)) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Entry order: key bytes, then activity id bytes, then the activity's own id first.
    static func less(_ a: Entry, _ b: Entry) -> Bool {
        let k = compare(a.key, b.key)
        if k != 0 { return k < 0 }
        let i = compare(a.activityID, b.activityID)
        if i != 0 { return i < 0 }
        return !a.isBooking && b.isBooking
    }

    /// The same entry, byte for byte (`==` on strings is canonical equivalence, not bytes).
    static func same(_ a: Entry, _ b: Entry) -> Bool {
        a.isBooking == b.isBooking && compare(a.key, b.key) == 0 && compare(a.activityID, b.activityID) == 0
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
