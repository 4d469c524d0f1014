/// The first `limit` live activities in phone order (`ActivityRecord.phoneOrder`), chosen in one
/// pass over the table: a bounded heap whose root is the last one kept, so a page of 100 out
/// of 100,000 costs n·log(100) comparisons instead of sorting (and copying) every record.
struct PhoneOrderSelection {
    let limit: Int
    /// Positions in the table; `heap[0]` comes last in phone order among those kept.
    private var heap: [Int] = []

    init(limit: Int) {
        self.limit = limit
        heap.reserveCapacity(limit)
    }

    mutating func offer(_ position: Int, in records: UnsafeBufferPointer<ActivityRecord>) {
        if heap.count < limit {
            heap.append(position)
            var i = heap.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard ActivityRecord.phoneOrder(records[heap[parent]], records[heap[i]]) else { break }
                heap.swapAt(i, parent)
                i = parent
            }
            return
        }
        guard limit > 0, ActivityRecord.phoneOrder(records[position], records[heap[0]]) else { return }
        heap[0] = position
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var last = i
            if l < heap.count, ActivityRecord.phoneOrder(records[heap[last]], records[heap[l]]) { last = l }
            if r < heap.count, ActivityRecord.phoneOrder(records[heap[last]], records[heap[r]]) { last = r }
            if last == i { break }
            heap.swapAt(i, last)
            i = last
        }
    }

    /// The kept positions, in phone order.
    func sorted(in records: UnsafeBufferPointer<ActivityRecord>) -> [Int] {
        heap.sorted { ActivityRecord.phoneOrder(records[$0], records[$1]) }
    }
}

/// What phone order needs of a live activity, with its state: a search copies these out under
/// the state lock and chooses its page from them outside it (`ReadHandlers.searched`).
struct PageKey {
    var order: PhoneOrderKey
    var state: ActivityState

    init(_ r: ActivityRecord, state: ActivityState) {
        order = PhoneOrderKey(r)
        self.state = state
    }

    var activityID: String { order.activityID }

    static func phoneOrder(_ a: PageKey, _ b: PageKey) -> Bool {
        PhoneOrderKey.ordered(a.order, b.order)
    }
}

/// The first `limit` keys in phone order, met one at a time: the same bounded heap as
/// `PhoneOrderSelection`, over keys.
struct KeySelection {
    let limit: Int
    /// `heap[0]` comes last in phone order among those kept.
    private var heap: [PageKey] = []

    init(limit: Int) {
        self.limit = limit
    }

    mutating func offer(_ key: PageKey) {
        if heap.count < limit {
            heap.append(key)
            var i = heap.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard PageKey.phoneOrder(heap[parent], heap[i]) else { break }
                heap.swapAt(i, parent)
                i = parent
            }
            return
        }
        guard limit > 0, PageKey.phoneOrder(key, heap[0]) else { return }
        heap[0] = key
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var last = i
            if l < heap.count, PageKey.phoneOrder(heap[last], heap[l]) { last = l }
            if r < heap.count, PageKey.phoneOrder(heap[last], heap[r]) { last = r }
            if last == i { break }
            heap.swapAt(i, last)
            i = last
        }
    }

    /// The kept keys, in phone order.
    func sorted() -> [PageKey] {
        heap.sorted(by: PageKey.phoneOrder)
    }
}
