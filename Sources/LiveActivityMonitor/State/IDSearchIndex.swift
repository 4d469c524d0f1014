import Prometheus

/// The live activities' ids and booking ids, lowercased and kept in byte order, for `?q=`
/// (prefix and exact match, any case): a search finds its matches by a binary search and a walk
/// over the matches alone, instead of lowercasing two ids per live activity.
///
/// Kept by `ActivityTable` as records come and go (so it holds exactly the table's records),
/// in `SortedChunks` (an insertion or a removal moves at most one chunk's entries). A reader walks
/// it in bounded slices (`entries(withPrefix:after:max:)`), each under the state lock for a few
/// hundred entries, so that no search holds the writer or a scrape for its whole length
/// (ARCHITECTURE.md, "Search").
/// An entry is its activity's position in the table's storage and which of its two ids it
/// stands for, in 4 bytes: its key is read from the record (`IDs`) when it is compared, not
/// kept (two million entries at a million live activities: 8 MB, where entries holding their
/// key took 48). The table re-points an activity's entries when a removal moves it
/// (`move(activityID:bookingID:from:to:ids:)`). Their order is by key, then by the activity's
/// id: an activity's place in it never changes while it stays, so that a reader's walk resumes
/// after an id (`Mark`) and meets each match once.
struct IDSearchIndex: Sendable {
    struct Entry: Sendable, Hashable {
        /// The position times two, plus one for the booking id: start-up's sort numbers its
        /// entries so (`SortKey`).
        fileprivate var number: UInt32

        init(position: Int, isBooking: Bool) {
            number = UInt32(truncatingIfNeeded: position) << 1 | (isBooking ? 1 : 0)
        }

        /// Where the activity it leads to is in the table's storage.
        var position: Int32 { Int32(bitPattern: number >> 1) }
        /// Whether it stands for the activity's booking id (otherwise its own id).
        var isBooking: Bool { number & 1 == 1 }
    }

    /// An entry by its activity's id: where a reader's walk stopped (positions move as records
    /// leave; ids do not), and the form the order compares.
    struct Mark: Sendable, Equatable {
        /// `key(_:)` of the id it stands for.
        var key: CompactID
        var activityID: CompactID
        var isBooking: Bool
    }

    /// The ids of the activity at a position (the table's records).
    typealias IDs = (Int) -> (activityID: CompactID, bookingID: CompactID?)

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
        return ExactText.equal(lowered, id) ? id : lowered
    }

    /// The key `id` is searched by: a UUID in lower case, any other id as `key(_:)` of its text.
    static func key(_ id: CompactID) -> CompactID {
        switch id {
        case .lowerUUID: return id
        case .upperUUID(let high, let low): return .lowerUUID(high, low)
        case .text(let text): return CompactID(key(text))
        }
    }

    /// Whether `id` matches the search `q` (already lowercased): `q` is a prefix of the
    /// lowercased id's bytes (an exact match is the longest prefix). The list's rule, for records
    /// the index does not hold (dismissed ones, read from the database).
    static func matches(_ id: String, _ q: String) -> Bool {
        hasPrefix(key(id), q)
    }

    init() {}

    /// The index of `count` activities at positions `0..<count`, activity `i`'s ids given by
    /// `ids(i)`, made at once: every entry sorted in one go and the entries put into chunks in
    /// that order, instead of an insertion (a binary search and a move) per entry. It holds only
    /// when the ids are distinct, which start-up finds out meanwhile (then `isInOrder`).
    ///
    /// A million live activities make two million entries here: the sort holds 16-byte numbers,
    /// no string, and each entry is read off them into its chunk.
    init(count: Int, ids: IDs) {
        var order: [SortKey] = []
        order.reserveCapacity(2 * count)
        for i in 0..<count {
            let (id, booking) = ids(i)
            order.append(SortKey(id, Entry(position: i, isBooking: false)))
            if let booking { order.append(SortKey(booking, Entry(position: i, isBooking: true))) }
        }
        // By the keys' first 12 bytes (numbers), by the whole entry (`less`) only where those
        // are equal.
        order.withUnsafeMutableBufferPointer { order in
            ByteRadixSort.sort(order) { a, b in
                if a.head != b.head { return a.head < b.head }
                if a.tail != b.tail { return a.tail < b.tail }
                return Self.order(a.entry, Self.mark(b.entry, ids), ids) < 0
            }
        }
        sorted = SortedChunks(count: order.count) { order[$0].entry }
    }

    /// An entry's place in the bulk sort: its key's first 12 bytes, big-endian (so that the
    /// numbers order as the bytes do; a shorter key is padded with zeros, and ties are broken
    /// by the whole entry), and the entry.
    private struct SortKey: ByteKeyed {
        var head: UInt64 = 0
        var tail: UInt32 = 0
        var entry: Entry

        init(_ id: CompactID, _ entry: Entry) {
            self.entry = entry
            (head, tail) = IDSearchIndex.withKeyBytes(id) { bytes in
                // Big-endian, zeros past the key's end.
                func word(_ from: Int, _ length: Int) -> UInt64 {
                    var word: UInt64 = 0
                    for i in from..<from + length { word = word << 8 | (i < bytes.count ? UInt64(bytes[i]) : 0) }
                    return word
                }
                return (word(0, 8), UInt32(word(8, 4)))
            }
        }

        static var keyLength: Int { 12 }

        func keyByte(_ i: Int) -> UInt8 {
            i < 8 ? UInt8(truncatingIfNeeded: head >> (56 - 8 * i)) : UInt8(truncatingIfNeeded: tail >> (24 - 8 * (i - 8)))
        }
    }

    /// The bytes of `key(id)`, without making it where `id` is a UUID or ASCII (written or lowered
    /// into a buffer on the stack): the bulk sort reads two million keys and keeps none.
    private static func withKeyBytes<R>(_ id: CompactID, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        guard case .text(var id) = id else { return key(id).withUTF8(body) }
        let ascii = id.withUTF8 { bytes in
            bytes.contains { $0 >= 0x80 } ? nil : withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count) { lowered in
                for i in bytes.indices { lowered[i] = bytes[i] &- UInt8(ascii: "A") < 26 ? bytes[i] | 0x20 : bytes[i] }
                return body(UnsafeBufferPointer(lowered))
            }
        }
        if let ascii { return ascii }
        var key = key(id)
        return key.withUTF8(body)
    }

    /// Adds the entries of the activity at `position`.
    mutating func insert(at position: Int, activityID: CompactID, bookingID: CompactID?, ids: IDs) {
        insert(Mark(key: Self.key(activityID), activityID: activityID, isBooking: false), at: position, ids)
        if let bookingID { insert(Mark(key: Self.key(bookingID), activityID: activityID, isBooking: true), at: position, ids) }
    }

    /// Takes out the entries of the activity at `position`.
    mutating func remove(at position: Int, activityID: CompactID, bookingID: CompactID?, ids: IDs) {
        for mark in Self.marks(activityID, bookingID) {
            let p = place(of: mark, ids)
            if let found = sorted[p], Self.order(found, mark, ids) == 0 { sorted.remove(at: p) }
        }
    }

    /// The activity at `old` is at `new` now (a removal moved it): its entries re-pointed in
    /// place, their order (by id) unchanged. Both found before either changes, while `ids`
    /// still reads the activity at `old`.
    mutating func move(activityID: CompactID, bookingID: CompactID?, from old: Int, to new: Int, ids: IDs) {
        let places = Self.marks(activityID, bookingID).map { place(of: $0, ids) }
        for p in places {
            guard let entry = sorted[p], Int(entry.position) == old else { continue }
            sorted.replace(at: p, with: Entry(position: new, isBooking: entry.isBooking))
        }
    }

    /// Up to `max` entries whose key starts with `q` (lowercased), in order, after `after`
    /// (exclusive; from the first when nil). Fewer than `max` means there are no more. Their
    /// positions hold until the table next changes: read them under the same lock.
    func entries(withPrefix q: String, after: Mark?, max: Int, ids: IDs) -> [Entry] {
        var p = if let after {
            sorted.firstPosition { Self.order($0, after, ids) <= 0 }
        } else {
            place(of: Mark(key: CompactID(q), activityID: .text(""), isBooking: false), ids)
        }
        var out: [Entry] = []
        let q = CompactID(q)
        func matches(_ e: Entry) -> Bool { Self.keyOrder(Self.id(e, ids), q, prefix: true) == 0 }
        while out.count < max, let e = sorted[p], matches(e) {
            out.append(e)
            p = sorted.position(after: p)
        }
        return out
    }

    /// `e` by its activity's id.
    static func mark(_ e: Entry, _ ids: IDs) -> Mark {
        Mark(key: key(id(e, ids)), activityID: ids(Int(e.position)).activityID, isBooking: e.isBooking)
    }

    /// The id `e` stands for, read from its record.
    private static func id(_ e: Entry, _ ids: IDs) -> CompactID {
        let (id, booking) = ids(Int(e.position))
        return e.isBooking ? booking ?? .text("") : id
    }

    /// Every entry by its activity's id, in order (tests).
    func all(_ ids: IDs) -> [Mark] { sorted.all.map { Self.mark($0, ids) } }

    /// The entries of an activity.
    private static func marks(_ activityID: CompactID, _ bookingID: CompactID?) -> [Mark] {
        [Mark(key: key(activityID), activityID: activityID, isBooking: false)]
            + (bookingID.map { [Mark(key: key($0), activityID: activityID, isBooking: true)] } ?? [])
    }

    private mutating func insert(_ mark: Mark, at position: Int, _ ids: IDs) {
        let p = place(of: mark, ids)
        if let found = sorted[p], Self.order(found, mark, ids) == 0 { return }
        sorted.insert(Entry(position: position, isBooking: mark.isBooking), at: p)
    }

    /// Where `mark`'s entry is, or would be.
    private func place(of mark: Mark, _ ids: IDs) -> SortedChunks<Entry>.Position {
        sorted.firstPosition { Self.order($0, mark, ids) < 0 }
    }

    /// Whether its entries are in order, each once (start-up's check of the bulk build).
    func isInOrder(_ ids: IDs) -> Bool {
        let all = all(ids)
        return zip(all, all.dropFirst()).allSatisfy { Self.less($0, $1) }
    }

    /// Entry order: key bytes, then activity id bytes, then the activity's own id first.
    static func less(_ a: Mark, _ b: Mark) -> Bool {
        let k = CompactID.byteOrder(a.key, b.key)
        if k != 0 { return k < 0 }
        let i = CompactID.byteOrder(a.activityID, b.activityID)
        if i != 0 { return i < 0 }
        return !a.isBooking && b.isBooking
    }

    /// `less` of an entry and a mark as a comparison (-1, 0, 1), the entry's key read from its
    /// record without making it where the id is a UUID or ASCII.
    private static func order(_ e: Entry, _ m: Mark, _ ids: IDs) -> Int {
        let (id, booking) = ids(Int(e.position))
        let k = keyOrder(e.isBooking ? booking ?? .text("") : id, m.key)
        if k != 0 { return k }
        let i = CompactID.byteOrder(id, m.activityID)
        if i != 0 { return i }
        return e.isBooking == m.isBooking ? 0 : (e.isBooking ? 1 : -1)
    }

    /// Byte order (memcmp) of `key(id)` and `key`, which keeps every key with a given byte prefix
    /// together; with `prefix`, 0 when `key` is a prefix of `key(id)`. Two UUIDs compare as
    /// numbers (a UUID is a prefix of another only when they are equal).
    private static func keyOrder(_ id: CompactID, _ key: CompactID, prefix: Bool = false) -> Int {
        switch (id, key) {
        case (.lowerUUID, .lowerUUID), (.upperUUID, .lowerUUID): return CompactID.byteOrder(Self.key(id), key)
        default: return withKeyBytes(id) { a in key.withUTF8 { CompactID.byteOrder(a, $0, prefix: prefix) } }
        }
    }

    static func hasPrefix(_ s: String, _ prefix: String) -> Bool {
        var s = s, prefix = prefix
        return s.withUTF8 { ps in prefix.withUTF8 { CompactID.byteOrder(ps, $0, prefix: true) == 0 } }
    }
}
