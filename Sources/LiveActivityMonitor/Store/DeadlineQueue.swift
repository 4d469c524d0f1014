/// A min-heap of (deadline, what it is for): which activities time alone is about to change
/// (`ActivityTable`'s queues, by a record's position: 12 bytes an entry), or which bookings'
/// start windows run out (`PushToStartBook`, by booking id).
/// Entries go stale when a record changes or moves; the caller checks each popped entry against
/// what it names now.
struct DeadlineQueue<ID: Sendable>: Sendable {
    // The heap's times and ids in two arrays, not one of pairs: an `(Double, Int32)` pair is 16
    // bytes with its padding, the two apart 12 (a million entries or two at a million live
    // activities), and sifting reads only the times.
    private var times: [Double] = []
    private var ids: [ID] = []

    /// How many entries above twice the live activities a queue may hold before it is rebuilt
    /// from them (so that a small table is not rebuilt at every commit).
    static var slack: Int { 64 }

    init() {}

    /// A queue of exactly these entries (`times[i]` for `ids[i]`), heapified in place.
    init(times: [Double], ids: [ID]) {
        precondition(times.count == ids.count, "a time for each id")
        self.times = times
        self.ids = ids
        for i in stride(from: times.count / 2 - 1, through: 0, by: -1) { siftDown(from: i) }
    }

    var count: Int { times.count }
    /// Where the entries are kept (a test checks that taking due entries does not copy them all).
    var storageAddress: UInt { times.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } }
    var earliest: Double? { times.first }

    mutating func push(_ at: Double, _ id: ID) {
        times.append(at)
        ids.append(id)
        var i = times.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard times[i] < times[parent] else { break }
            swapEntries(i, parent)
            i = parent
        }
    }

    /// Every entry due at `now`, left in place: a walk of the heap that stops at each entry
    /// after `now` (its subtree is later still), so it costs what is due, not the queue.
    func due(at now: Double) -> [ID] {
        var due: [ID] = []
        var stack = times.isEmpty ? [] : [0]
        while let i = stack.popLast() {
            guard times[i] <= now else { continue }
            due.append(ids[i])
            let left = 2 * i + 1
            if left < times.count { stack.append(left) }
            if left + 1 < times.count { stack.append(left + 1) }
        }
        return due
    }

    /// Removes and returns the entries due at `now`, earliest first, at most `limit` of them.
    mutating func popDue(_ now: Double, limit: Int = .max) -> [ID] {
        var due: [ID] = []
        while due.count < limit, let first = times.first, first <= now {
            due.append(ids[0])
            swapEntries(0, times.count - 1)
            times.removeLast()
            ids.removeLast()
            siftDown(from: 0)
        }
        return due
    }

    private mutating func swapEntries(_ a: Int, _ b: Int) {
        times.swapAt(a, b)
        ids.swapAt(a, b)
    }

    private mutating func siftDown(from start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var smallest = i
            if l < times.count, times[l] < times[smallest] { smallest = l }
            if r < times.count, times[r] < times[smallest] { smallest = r }
            if smallest == i { return }
            swapEntries(i, smallest)
            i = smallest
        }
    }
}
