import Prometheus

/// The live activities in phone order (`PhoneOrderKey`), kept sorted in one cell per state and
/// attributes type, so that a page of the list (`ActivityTable.livePage`) is read from the
/// front of the cells its filters choose, from the cursor on, instead of walking every record.
///
/// A cell holds its records' positions in the table's storage (4 bytes each; a key held its
/// id and two numbers, 32), and the order reads each record's key there (`Keys`) as it
/// compares: the table re-points a record's entry when a removal moves it (`repoint`).
///
/// A record's cell is its state as of the table's `gaugeTime`: `ActivityTable` moves a record
/// between cells on the same paths that count it in the gauges (its put and removal, and the
/// gauges brought forward by time), and a read at a later instant corrects for the records whose
/// state the gauge queue says may have changed since (`first(_:…skipping:)` leaves them out;
/// the table adds them back by their state at that instant). Dismissed records are in no cell.
struct PhoneOrderIndex: Sendable {
    /// A state the list counts (never `dismissed`) and an attributes type, by its bytes.
    struct Cell: Hashable, Sendable {
        var state: ActivityState
        var type: ExactString
    }

    private var cells: [Cell: SortedChunks<Int32>] = [:]

    /// The key of the record at a position (the table's records).
    typealias Keys = (Int32) -> PhoneOrderKey

    /// Where a record is kept at an instant: its key, in its cell (none once it is dismissed).
    struct Place: Equatable {
        var key: PhoneOrderKey
        var cell: Cell?

        init(_ record: borrowing ActivityRecord, at time: Double) {
            key = PhoneOrderKey(record)
            cell = Self.cell(of: record, at: time)
        }

        /// The cell of `record` at `time`: none once it is dismissed.
        static func cell(of record: borrowing ActivityRecord, at time: Double) -> Cell? {
            cellState(of: record, at: time).map { Cell(state: $0, type: ExactString(record.attributesType)) }
        }

        /// The state of that cell.
        static func cellState(of record: borrowing ActivityRecord, at time: Double) -> ActivityState? {
            let state = record.state(at: time)
            return state == .dismissed ? nil : state
        }
    }

    init() {}

    /// The cells of `records` as of `time`, built in bulk: one sort, in place (`ByteRadixSort`).
    /// Start-up builds it for every live record: the sort moves `Member`s (three numbers and the
    /// record's place, nothing reference counted), and the cells keep the places.
    /// All cells are sorted as one array made at its size (by cell first), so that start-up's
    /// peak memory holds one member per record beside the chunks, not per-cell arrays grown by
    /// doubling and their sorted copies.
    init(_ records: UnsafeBufferPointer<ActivityRecord>, at time: Double) {
        struct Member: ByteKeyed {
            var relevance: Double
            var startedAt: Double
            /// Where its cell is in `found`.
            var cell: Int32
            var record: Int32

            /// The cell, then relevance and start time, each highest first (`PhoneOrderKey.ordered`).
            static var keyLength: Int { 20 }

            func keyByte(_ i: Int) -> UInt8 {
                let word = switch i {
                case 0..<4: UInt64(UInt32(cell))
                case 4..<12: ~Self.ascending(relevance)
                default: ~Self.ascending(startedAt)
                }
                // Highest byte first: the cell's 4 are its word's low half, then 8 of each number.
                return UInt8(truncatingIfNeeded: word >> (56 - 8 * ((i + 4) % 8)))
            }

            /// A number whose unsigned order is `x`'s (0 and -0 equal, as `==` has them).
            static func ascending(_ x: Double) -> UInt64 {
                let bits = (x == 0 ? 0 : x).bitPattern
                return bits >> 63 == 1 ? ~bits : bits | 1 << 63
            }
        }
        var found: [Cell] = []
        // A cell's number in `found` by its state and its type's number (`RecordTypes`: no
        // type made or hashed per record); -1 for none yet.
        var types = RecordTypes(), numbered: [Int32] = []
        let states = ActivityState.allCases.count
        var members: [Member] = []
        members.reserveCapacity(records.count)
        for i in records.indices {
            // A `Place` of each record, its key's numbers alone: the id is read once sorted.
            guard let state = Place.cellState(of: records[i], at: time) else { continue }
            let slot = types.number(of: records, i) * states + state.ordinal
            if slot >= numbered.count { numbered += repeatElement(-1, count: slot + 1 - numbered.count) }
            if numbered[slot] < 0 {
                numbered[slot] = Int32(found.count)
                found.append(Cell(state: state, type: ExactString(records[i].attributesType)))
            }
            members.append(Member(relevance: PhoneOrderKey.relevance(of: records[i]), startedAt: records[i].startedAt,
                                  cell: numbered[slot], record: Int32(i)))
        }
        func key(_ m: Member) -> PhoneOrderKey { PhoneOrderKey(records[Int(m.record)]) }
        // By cell, then `PhoneOrderKey.ordered`; an id is read only where the numbers tie.
        members.withUnsafeMutableBufferPointer { members in
            ByteRadixSort.sort(members) { a, b in
                if a.cell != b.cell { return a.cell < b.cell }
                guard a.relevance == b.relevance, a.startedAt == b.startedAt else {
                    return PhoneOrderKey.ordered(PhoneOrderKey(relevance: a.relevance, startedAt: a.startedAt, activityID: .text("")),
                                                 PhoneOrderKey(relevance: b.relevance, startedAt: b.startedAt, activityID: .text("")))
                }
                return PhoneOrderKey.ordered(key(a), key(b))
            }
        }
        var start = 0
        while start < members.count {
            let cell = members[start].cell
            let end = members[start...].firstIndex { $0.cell != cell } ?? members.endIndex
            cells[found[Int(cell)]] = SortedChunks(count: end - start) { [start] in members[start + $0].record }
            start = end
        }
        assert(isInOrder { PhoneOrderKey(records[Int($0)]) }, "in order, each once")
    }

    /// A record's change, the one way the cells change after a build: the record at `position`
    /// out of `old`'s place and into `new`'s (nil: it was not kept, or is no longer). Most
    /// changes (an update) keep the key and the cell: then nothing moves. `keys` reads the
    /// records as they were before the change (the one at `position` is not read for `new`).
    mutating func move(_ position: Int, from old: Place?, to new: Place?, keys: Keys) {
        guard old != new else { return }
        if let old, let cell = old.cell, let p = cells[cell]?.place(of: old.key, keys), cells[cell]?[p] == Int32(position) {
            cells[cell]?.remove(at: p)
            if cells[cell]?.isEmpty == true { cells[cell] = nil }
        }
        if let new, let cell = new.cell {
            let p = cells[cell, default: SortedChunks()].place(of: new.key, keys)
            cells[cell, default: SortedChunks()].insert(Int32(position), at: p)
        }
    }

    /// The record at `old`, kept at `place`, is at `new` now (a removal moved it): its entry
    /// re-pointed, its order unchanged. Called while `keys` still reads it at `old`.
    mutating func repoint(_ place: Place, from old: Int, to new: Int, keys: Keys) {
        guard let cell = place.cell, let p = cells[cell]?.place(of: place.key, keys), cells[cell]?[p] == Int32(old) else { return }
        cells[cell]?.replace(at: p, with: Int32(new))
    }

    /// Up to `limit` keys in phone order, after `after` when given, from the cells of `state`
    /// (any counted state when nil) and of the types equal to `type` (`==` on strings, as the
    /// list's filter compares; any type when nil), leaving out the ids in `skipping`: a merge
    /// of those cells from a binary search in each, so it costs the page and the cells, not
    /// the records.
    func first(_ limit: Int, state: ActivityState?, type: String?, after: PhoneOrderKey?,
               skipping: Set<CompactID>, keys: Keys) -> [PhoneOrderKey] {
        var merge = Merge()
        for (cell, members) in cells where state.map({ $0 == cell.state }) ?? true && type.map({ $0 == cell.type.text }) ?? true {
            let start = after.map { after in members.firstPosition { !PhoneOrderKey.ordered(after, keys($0)) } }
                ?? SortedChunks.Position(chunk: 0, index: 0)
            merge.add(members, from: start, keys)
        }
        var out: [PhoneOrderKey] = []
        while out.count < limit, let key = merge.next(keys) {
            if !skipping.contains(key.activityID) { out.append(key) }
        }
        return out
    }

    /// Every cell's keys, in order (tests compare a kept index with one built in bulk).
    func contents(_ keys: Keys) -> [Cell: [PhoneOrderKey]] { cells.mapValues { $0.all.map(keys) } }

    /// Whether every cell is in phone order, each record once (a bulk build's check, in debug builds).
    private func isInOrder(_ keys: Keys) -> Bool {
        contents(keys).values.allSatisfy { zip($0, $0.dropFirst()).allSatisfy { PhoneOrderKey.ordered($0, $1) } }
    }

    /// A k-way merge of sorted cells: a heap of each cell's next key, the first in phone order on top.
    private struct Merge {
        private typealias Head = (key: PhoneOrderKey, members: SortedChunks<Int32>, at: SortedChunks<Int32>.Position)
        private var heads = BinaryHeap<Head> { PhoneOrderKey.ordered($0.key, $1.key) }

        mutating func add(_ members: SortedChunks<Int32>, from start: SortedChunks<Int32>.Position, _ keys: Keys) {
            guard let position = members[start] else { return }
            heads.push((keys(position), members, start))
        }

        /// The next key in phone order, nil when every cell is done.
        mutating func next(_ keys: Keys) -> PhoneOrderKey? {
            guard let top = heads.top else { return nil }
            let at = top.members.position(after: top.at)
            if let position = top.members[at] {
                heads.replaceTop(with: (keys(position), top.members, at))
            } else {
                heads.removeTop()
            }
            return top.key
        }
    }
}

extension SortedChunks<Int32> {
    /// Where the record keyed `key` is, or would be, among positions in phone order.
    fileprivate func place(of key: PhoneOrderKey, _ keys: PhoneOrderIndex.Keys) -> Position {
        firstPosition { PhoneOrderKey.ordered(keys($0), key) }
    }
}
