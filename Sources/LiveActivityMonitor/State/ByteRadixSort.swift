/// An in-place sort for start-up's bulk index builds (`IDSearchIndex`, `PhoneOrderIndex`): a
/// million or two elements whose order begins with a key of a few bytes (`ByteKeyed`).
///
/// Most significant byte first (an American flag sort): a range is split into buckets by one
/// key byte, in place, and each bucket by the next byte; a short range, or one whose elements
/// are equal in every key byte, is sorted by `less`. It is here for memory: it takes no room
/// beyond the elements, where `sort`'s merge buffer (half the elements) set start-up's peak.
/// In time it is a little ahead of `sort` (each pass over the elements waits on memory; decimal
/// ids take six or seven byte levels): PERFORMANCE.md, session 24.
enum ByteRadixSort {
    /// Sorts `elements` by `less`. Its order must begin with the key: an element whose key bytes
    /// come first (as unsigned bytes, from the first) comes first by `less` too.
    static func sort<Element: ByteKeyed>(_ elements: UnsafeMutableBufferPointer<Element>,
                                         by less: (Element, Element) -> Bool) {
        sort(elements, from: 0, less: less)
    }

    /// Ranges this short are sorted by comparisons: splitting them costs more.
    static let shortRange = 32

    /// Sorts `elements`, equal in their key's first `first` bytes.
    private static func sort<Element: ByteKeyed>(_ elements: UnsafeMutableBufferPointer<Element>, from first: Int,
                                                 less: (Element, Element) -> Bool) {
        // Each bucket's next unplaced slot (`next[b]`) and its end (`next[256 + b]`): one pair of
        // tables a level, on the stack, as a level reads its ends after the levels below.
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 512) { next in
            var elements = elements
            var d = first
            // The bytes met, `low...high`: short keys meet a dozen of the 256.
            var low = 0, high = 0
            // A byte all share splits nothing: the next is read instead.
            while true {
                guard d < Element.keyLength else { return elements.sort(by: less) }
                guard elements.count > shortRange else { return insertionSort(elements, by: less) }
                next.initialize(repeating: 0)
                low = 255
                high = 0
                for e in elements {
                    let b = Int(e.keyByte(d))
                    next[b] += 1
                    low = min(low, b)
                    high = max(high, b)
                }
                if low != high { break }
                d += 1
            }
            var start = 0
            for b in low...high {
                let count = next[b]
                next[b] = start
                start += count
                next[256 + b] = start
            }
            // Each element carried to its bucket's next unplaced slot, taking that slot's element
            // on to its own bucket, until one that belongs here comes back.
            let base = elements.baseAddress!
            for b in low...high {
                while next[b] < next[256 + b] {
                    var carried = (base + next[b]).move()
                    var target = Int(carried.keyByte(d))
                    while target != b {
                        swap(&carried, &base[next[target]])
                        next[target] += 1
                        target = Int(carried.keyByte(d))
                    }
                    (base + next[b]).initialize(to: carried)
                    next[b] += 1
                }
            }
            var from = 0
            for b in low...high {
                let end = next[256 + b]
                if end - from > 1 {
                    sort(UnsafeMutableBufferPointer(rebasing: elements[from..<end]), from: d + 1, less: less)
                }
                from = end
            }
        }
    }

    /// Sorts a few elements by `less` in place (`sort(by:)` takes a buffer past 20).
    private static func insertionSort<Element>(_ elements: UnsafeMutableBufferPointer<Element>,
                                               by less: (Element, Element) -> Bool) {
        guard elements.count > 1 else { return }
        let base = elements.baseAddress!
        for i in elements.indices.dropFirst() {
            let moving = (base + i).move()
            var j = i
            while j > 0, less(moving, base[j - 1]) {
                (base + j).moveInitialize(from: base + j - 1, count: 1)
                j -= 1
            }
            (base + j).initialize(to: moving)
        }
    }
}

/// An element `ByteRadixSort` sorts: its order begins with a key of `keyLength` bytes.
protocol ByteKeyed {
    static var keyLength: Int { get }
    /// Byte `i` of the key, most significant first.
    func keyByte(_ i: Int) -> UInt8
}
