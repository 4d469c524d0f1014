/// A min-heap of (deadline, what it is for): which activities time alone is about to change
/// (`ActivityTable`'s queues, by a record's position: 16 bytes an entry), or which bookings'
/// start windows run out (`PushToStartBook`, by booking id).
/// Entries go stale when a record changes or moves; the caller checks each popped entry against
/// what it names now.
struct DeadlineQueue<ID: Sendable>: Sendable {
    private var heap: [(at: Double, id: ID)] = []

    /// How many entries above twice the live activities a queue may hold before it is rebuilt
    /// from them (so that a small table is not rebuilt at every commit).
    static var slack: Int { 64 }

    init() {}

    /// A queue of exactly these entries, heapified in place.
    init(_ entries: [(at: Double, id: ID)]) {
        heap = entries
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(from: i) }
    }

    var count: Int { heap.count }
    /// Where the entries are kept (a test checks that taking due entries does not copy them all).
    var storageAddress: UInt { heap.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } }
    var earliest: Double? { heap.first?.at }

    mutating func push(_ at: Double, _ id: ID) {
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
    func due(at now: Double) -> [ID] {
        var due: [ID] = []
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

    /// Removes and returns the entries due at `now`, earliest first, at most `limit` of them.
    mutating func popDue(_ now: Double, limit: Int = .max) -> [ID] {
        var due: [ID] = []
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
