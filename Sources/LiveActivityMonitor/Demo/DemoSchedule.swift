/// A min-heap of scheduled events: what the demo posts next, in time order.
struct DemoSchedule: Sendable {
    private var heap: [DemoScheduledEvent] = []
    private var sequence = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    var earliest: Double? { heap.first?.time }

    mutating func add(_ event: DemoScheduledEvent) {
        var e = event
        e.sequence = sequence
        sequence += 1
        heap.append(e)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].isBefore(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() -> DemoScheduledEvent? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let first = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].isBefore(heap[smallest]) { smallest = left }
            if right < heap.count, heap[right].isBefore(heap[smallest]) { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}
