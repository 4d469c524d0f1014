/// Where each record of `ActivityTable` is in its storage, by the record's id, without holding
/// the id: an open-addressing hash table (linear probing) of 4-byte slots, each confirmed
/// against the record it leads to (`id(at:)`, the table's storage). A `[String: Int]` held a
/// 16-byte String and an 8-byte Int per slot: 39 bytes a record, where this costs 5 to 8
/// (docs/ARCHITECTURE.md, "What one record costs").
///
/// A slot is 0 when empty; otherwise the position + 1 in its low `positionBits` bits and 5 bits
/// of the id's hash above them (a tag), so that a probe reads a record (a cache miss into the
/// storage and an id comparison) only when the tags match: for one other id in 32.
/// The hash is `CompactID`'s own (seeded per process, so that ids chosen by a client cannot
/// make the probes long; canonically equivalent ids are one id, as they were as dictionary keys).
struct IDPositions: Sendable {
    private var slots: [UInt32] = []
    private(set) var count = 0

    private static let positionBits: UInt32 = 27
    private static let positionMask: UInt32 = 1 << positionBits - 1
    /// More positions than `--max-live-activities` allows (10⁸).
    static let maxCount = Int(positionMask) - 1

    init() {}

    /// The positions of `count` records, record `i`'s id given by `id(i)`, made at once. An id
    /// met again leads to its last position (as `set` leaves it): fewer entries than `count`
    /// then say so.
    init(count: Int, id: (Int) -> CompactID) {
        precondition(count <= Self.maxCount, "more records than a position holds")
        // Two thirds full: 6 bytes a record, and room to grow by a quarter before a rehash.
        slots = Array(repeating: 0, count: Swift.max(16, count + count / 2))
        for i in 0..<count { set(id(i), to: i, id: id) }
    }

    /// The position of `id`, if it is here.
    func position(of id: CompactID, id idAt: (Int) -> CompactID) -> Int? {
        guard count > 0 else { return nil }
        let h = Self.hash(id), tag = Self.tag(h)
        var s = home(h)
        while slots[s] != 0 {
            if slots[s] >> Self.positionBits == tag, idAt(Self.position(slots[s])) == id { return Self.position(slots[s]) }
            s = next(s)
        }
        return nil
    }

    /// `id` is at `position` now: added, or in place of the position it had.
    mutating func set(_ id: CompactID, to position: Int, id idAt: (Int) -> CompactID) {
        precondition(position < Self.maxCount, "more records than a position holds")
        // Grown at four fifths full to twice the entries (half full: 8 bytes a record), so that
        // an id not here (a new activity's put) probes a dozen slots on average, a few reads.
        if 5 * (count + 1) > 4 * slots.count { rehash(slotCount: Swift.max(16, 2 * (count + 1)), id: idAt) }
        let h = Self.hash(id), tag = Self.tag(h)
        var s = home(h)
        while slots[s] != 0 {
            if slots[s] >> Self.positionBits == tag, idAt(Self.position(slots[s])) == id { break }
            s = next(s)
        }
        if slots[s] == 0 { count += 1 }
        slots[s] = Self.slot(tag, position)
    }

    /// `id`, at `old`, is at `new` now (another record left `new`).
    mutating func move(_ id: CompactID, from old: Int, to new: Int) {
        let h = Self.hash(id)
        let s = slot(of: old, home: home(h))
        slots[s] = Self.slot(Self.tag(h), new)
    }

    /// Forgets `id`, which is at `position`. The slots after it in its run move back into the
    /// gap where their probe allows (no tombstones: a lookup's probe stays as short as the load
    /// makes it): each one's home is found from its record's id, read by `id(at:)`.
    mutating func remove(_ id: CompactID, at position: Int, id idAt: (Int) -> CompactID) {
        var hole = slot(of: position, home: home(Self.hash(id)))
        var j = hole
        while true {
            j = next(j)
            if slots[j] == 0 { break }
            let k = home(Self.hash(idAt(Self.position(slots[j]))))
            // The entry at `j` may fill the hole if the hole lies on its probe, from `k` to `j`.
            if distance(k, j) >= distance(hole, j) {
                slots[hole] = slots[j]
                hole = j
            }
        }
        slots[hole] = 0
        count -= 1
    }

    /// How many slots there are, 4 bytes each (tests).
    var slotCount: Int { slots.count }

    /// The slot that holds `position`, on the probe from `home` (it is there).
    private func slot(of position: Int, home: Int) -> Int {
        var s = home
        while Self.position(slots[s]) != position {
            precondition(slots[s] != 0, "a position not in the table")
            s = next(s)
        }
        return s
    }

    /// Every entry again in `slotCount` slots. Taken in their positions' order, so that the
    /// records whose ids are hashed again are read as their storage holds them (a stream the
    /// processor prefetches), not in the slots' random order: at 1,200,000 entries 0.13 s
    /// instead of 0.37 s, measured alone (PERFORMANCE.md, session 28), for a transient 4 bytes
    /// an entry.
    private mutating func rehash(slotCount: Int, id idAt: (Int) -> CompactID) {
        var ends = 0
        for v in slots where v != 0 { ends = Swift.max(ends, Self.position(v) + 1) }
        var byPosition = [UInt32](repeating: 0, count: ends)
        for v in slots where v != 0 { byPosition[Self.position(v)] = v }
        slots = Array(repeating: 0, count: slotCount)
        for (position, v) in byPosition.enumerated() where v != 0 {
            var s = home(Self.hash(idAt(position)))
            while slots[s] != 0 { s = next(s) }
            slots[s] = v
        }
    }

    private static func hash(_ id: CompactID) -> UInt64 { UInt64(bitPattern: Int64(id.hashValue)) }
    /// The hash's high bits choose the slot (`home`), its low bits the tag.
    private static func tag(_ hash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: hash) & 0x1F }
    /// Where a probe for `hash` starts: the hash scaled to the slots (no power of two needed).
    private func home(_ hash: UInt64) -> Int { Int(hash.multipliedFullWidth(by: UInt64(slots.count)).high) }
    private func next(_ s: Int) -> Int { s + 1 == slots.count ? 0 : s + 1 }
    /// How far a probe goes from slot `a` to slot `b`, wrapping.
    private func distance(_ a: Int, _ b: Int) -> Int { b >= a ? b - a : b + slots.count - a }
    private static func slot(_ tag: UInt32, _ position: Int) -> UInt32 { tag << positionBits | UInt32(position + 1) }
    private static func position(_ slot: UInt32) -> Int { Int(slot & positionMask) - 1 }
}
