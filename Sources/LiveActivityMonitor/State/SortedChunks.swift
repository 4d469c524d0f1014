/// An element with a strict total order, kept by `SortedChunks`.
protocol ChunkOrdered: Sendable {
    /// Whether `a` comes before `b`. Two elements neither of which comes before the other are
    /// the same element (a set holds one of them).
    static func ordered(_ a: Self, _ b: Self) -> Bool
}

/// A sorted set kept in chunks of at most `maxChunk` elements: an insertion or a removal moves
/// at most one chunk's elements (a sorted array of 400,000 elements moved megabytes per
/// insertion), a search is two binary searches, and a reader walks on from a `Position`.
/// The id search (`IDSearchIndex`) and the wall's order (`PhoneOrderIndex`) are kept in it.
/// Elements whose order is their own (`ChunkOrdered`) are inserted and removed by value; the id
/// search, whose order reads its records, finds the place itself and inserts or removes there.
struct SortedChunks<Element: Sendable>: Sendable {
    static var maxChunk: Int { 512 }
    private var chunks: [[Element]] = []
    private(set) var count = 0

    /// Where an element is (or would be): a chunk and a place in it. `chunk == chunks.count`
    /// is the end.
    struct Position: Equatable {
        var chunk: Int
        var index: Int
    }

    init() {}

    /// `count` elements in order, element `i` made by `element(i)` (each called once, in order;
    /// a bulk build: O(n) after the caller's sort), with no element twice. Chunks are filled
    /// half, so that the next insertions do not split them. The bulk builds that make their
    /// elements as they go (moved in, or read from records in a sort's order) call it and gather
    /// no array first; `init(sorted:)` takes an array.
    init(count: Int, element: (Int) -> Element) {
        let fill = Self.maxChunk / 2
        chunks.reserveCapacity((count + fill - 1) / fill)
        var start = 0
        while start < count {
            let n = Swift.min(fill, count - start)
            chunks.append(Array(unsafeUninitializedCapacity: n) { chunk, initialized in
                for j in 0..<n { (chunk.baseAddress! + j).initialize(to: element(start + j)) }
                initialized = n
            })
            start += n
        }
        self.count = count
    }

    var isEmpty: Bool { count == 0 }

    /// Every element, in order (tests, and a rebuild).
    var all: [Element] { chunks.flatMap { $0 } }

    /// Inserts `e` at `p`, the place its order gives it.
    mutating func insert(_ e: Element, at p: Position) {
        if chunks.isEmpty { chunks = [[e]]; count = 1; return }
        // Past the last element: into the last chunk.
        var p = p
        if p.chunk == chunks.count { p = Position(chunk: chunks.count - 1, index: chunks[chunks.count - 1].count) }
        // A chunk grows by an eighth of `maxChunk` at a time, and both halves of a split are
        // copied to their size: grown by doubling, the 513th element made room for 1,024, which
        // the lower half kept, and chunks were a quarter to half full (docs/ARCHITECTURE.md,
        // "What one record costs").
        if chunks[p.chunk].count == chunks[p.chunk].capacity {
            chunks[p.chunk].reserveCapacity(chunks[p.chunk].count + Self.maxChunk / 8)
        }
        chunks[p.chunk].insert(e, at: p.index)
        count += 1
        if chunks[p.chunk].count > Self.maxChunk {
            let upper = Array(chunks[p.chunk][(Self.maxChunk / 2)...])
            chunks[p.chunk] = Array(chunks[p.chunk][..<(Self.maxChunk / 2)])
            chunks.insert(upper, at: p.chunk + 1)
        }
    }

    /// Removes the element at `p` (not the end).
    mutating func remove(at p: Position) {
        chunks[p.chunk].remove(at: p.index)
        count -= 1
        if chunks[p.chunk].isEmpty { chunks.remove(at: p.chunk) }
    }

    /// The first position whose element is not `below`, where `below` holds for a first run of
    /// the elements and for none after it (the end when it holds for all): a binary search of
    /// the chunks' last elements, then of one chunk.
    func firstPosition(where below: (Element) -> Bool) -> Position {
        var lo = 0, hi = chunks.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if below(chunks[mid][chunks[mid].count - 1]) { lo = mid + 1 } else { hi = mid }
        }
        guard lo < chunks.count else { return Position(chunk: lo, index: 0) }
        let chunk = chunks[lo]
        var i = 0, j = chunk.count
        while i < j {
            let mid = (i + j) / 2
            if below(chunk[mid]) { i = mid + 1 } else { j = mid }
        }
        return Position(chunk: lo, index: i)
    }

    /// The element at `p`; nil at the end.
    subscript(p: Position) -> Element? {
        p.chunk < chunks.count ? chunks[p.chunk][p.index] : nil
    }

    /// Puts `e` in place of the element at `p` (not the end), where it orders the same.
    mutating func replace(at p: Position, with e: Element) {
        chunks[p.chunk][p.index] = e
    }

    /// The position after `p` (which is not the end).
    func position(after p: Position) -> Position {
        p.index + 1 < chunks[p.chunk].count ? Position(chunk: p.chunk, index: p.index + 1)
            : Position(chunk: p.chunk + 1, index: 0)
    }
}

extension SortedChunks where Element: ChunkOrdered {
    /// Exactly `sorted`, which is in order with no element twice.
    init<Sorted: RandomAccessCollection<Element>>(sorted: Sorted) where Sorted.Index == Int {
        self.init(count: sorted.count) { sorted[sorted.startIndex + $0] }
        assert(isInOrder, "in order, each once")
    }

    /// Whether the elements are in order, each once (a bulk build's check, in debug builds).
    var isInOrder: Bool {
        let all = all
        return zip(all, all.dropFirst()).allSatisfy { Element.ordered($0, $1) }
    }

    /// Inserts `e` unless it is there already; whether it was inserted.
    @discardableResult
    mutating func insert(_ e: Element) -> Bool {
        let p = firstPosition { Element.ordered($0, e) }
        if let found = self[p], !Element.ordered(e, found) { return false }
        insert(e, at: p)
        return true
    }

    /// Removes `e` if it is there; whether it was.
    @discardableResult
    mutating func remove(_ e: Element) -> Bool {
        let p = firstPosition { Element.ordered($0, e) }
        guard let found = self[p], !Element.ordered(e, found) else { return false }
        remove(at: p)
        return true
    }
}
