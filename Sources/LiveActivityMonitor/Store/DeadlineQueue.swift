/// A min-heap of (deadline, activity id): which activities time alone is about to change.
/// Entries go stale when a record changes; the caller checks each popped entry against the record.
struct DeadlineQueue: Sendable {
    private var heap: [(at: Double, id: String)] = []

    /// How many entries above twice the live activities a queue may hold before it is rebuilt
    /// from them (so that a small table is not rebuilt at every commit).
    static let slack = 64

    init() {}

    /// A queue of exactly these entries, heapified in place.
    init(_ entries: [(at: Double, id: String)]) {
        heap = entries
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(from: i) }
    }

    var count: Int { heap.count }
    /// Where the entries are kept (a test checks that taking due entries does not copy them all).
    var storageAddress: UInt { heap.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } }
    var earliest: Double? { heap.first?.at }

    mutating func push(_ at: Double, _ id: String) {
        heap.append((at, id))
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i].at < heap[parent].at else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    /// Every entry due at `now`, left in place: a walk of the heap that stops at each entry
    /// after `now` (its subtree is later still), so it costs what is due, not the queue.
    func due(at now: Double) -> [String] {
        var due: [String] = []
        var stack = heap.isEmpty ? [] : [0]
        while let i = stack.popLast() {
            guard heap[i].at <= now else { continue }
            due.append(heap[i].id)
            let left = 2 * i + 1
            if left < heap.count { stack.append(left) }
            if left + 1 < heap.count { stack.append(left + 1) }
        }
        return due
    }

    /// How many due entries one commit takes at most. A restart after hours down finds every
    /// live activity due at once: a million in one transaction took 75 s and 2 GB, and start-up
    /// waited for it. The rest follow in commits of their own, between the requests'.
    static let duePerCommit = 2_000

    /// Removes and returns the entries due at `now`, earliest first, at most `limit` of them.
    mutating func popDue(_ now: Double, limit: Int = .max) -> [String] {
        var due: [String] = []
        while due.count < limit, let first = heap.first, first.at <= now {
            due.append(first.id)
            heap.swapAt(0, heap.count - 1)
            heap.removeLast()
            siftDown(from: 0)
        }
        return due
    }

    private mutating func siftDown(from start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var smallest = i
            if l < heap.count, heap[l].at < heap[smallest].at { smallest = l }
            if r < heap.count, heap[r].at < heap[smallest].at { smallest = r }
            if smallest == i { return }
            heap.swapAt(i, smallest)
            i = smallest
        }
    }
}
