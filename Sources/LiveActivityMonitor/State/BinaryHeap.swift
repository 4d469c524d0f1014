/// A binary heap whose top is the element that comes first by `first`: the one heap of the read
/// paths, for the k-way merge of the kept phone order (`PhoneOrderIndex.first`) and, through
/// `FirstInOrder`, the bounded choice of a page (the list's walk, a search's keys).
struct BinaryHeap<Element> {
    private(set) var elements: [Element] = []
    /// Whether `a` comes before `b` (a strict order).
    let first: (Element, Element) -> Bool

    init(first: @escaping (Element, Element) -> Bool) {
        self.first = first
    }

    var count: Int { elements.count }
    var top: Element? { elements.first }

    mutating func reserveCapacity(_ n: Int) { elements.reserveCapacity(n) }

    mutating func push(_ element: Element) {
        elements.append(element)
        var i = elements.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard first(elements[i], elements[parent]) else { return }
            elements.swapAt(i, parent)
            i = parent
        }
    }

    /// Puts `element` in the top's place (cheaper than a pop and a push).
    mutating func replaceTop(with element: Element) {
        elements[0] = element
        siftDown()
    }

    /// Takes the top away.
    mutating func removeTop() {
        elements.swapAt(0, elements.count - 1)
        elements.removeLast()
        siftDown()
    }

    private mutating func siftDown() {
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var top = i
            if l < elements.count, first(elements[l], elements[top]) { top = l }
            if r < elements.count, first(elements[r], elements[top]) { top = r }
            if top == i { return }
            elements.swapAt(i, top)
            i = top
        }
    }
}

/// The first `limit` elements by `ordered` among those offered one at a time, without sorting
/// (or keeping) the others: a bounded `BinaryHeap` whose top is the last one kept, so a page of
/// 100 out of 100,000 costs n·log(100) comparisons.
struct FirstInOrder<Element> {
    let limit: Int
    private var heap: BinaryHeap<Element>
    private let ordered: (Element, Element) -> Bool

    init(limit: Int, ordered: @escaping (Element, Element) -> Bool) {
        self.limit = limit
        self.ordered = ordered
        heap = BinaryHeap { ordered($1, $0) }
        heap.reserveCapacity(limit)
    }

    mutating func offer(_ element: Element) {
        if heap.count < limit {
            heap.push(element)
        } else if let last = heap.top, ordered(element, last) {
            heap.replaceTop(with: element)
        }
    }

    /// The kept elements, in order.
    func sorted() -> [Element] {
        heap.elements.sorted(by: ordered)
    }
}
