import Glibc

/// The table's records in one block of memory that grows by `realloc`, a value with
/// copy-on-write as an array is.
///
/// An `Array` grows by allocating a block twice its size and moving every element into it. At
/// a million records (192 MB) the first new activity after a restart did so: the copy and the
/// new block's page faults were 12 % of the writer's time over the next 10,000 new activities,
/// and both blocks were resident at once, 192 MB above the restart's peak. glibc grows a block
/// past its mmap threshold (32 MB at most) with `mremap`, which moves page-table entries, not
/// bytes, so growth costs neither. Records are moved as bytes, which Swift allows for them
/// (bitwise-takable: strong references and strings, no weak reference).
struct RecordStorage: RandomAccessCollection, MutableCollection, Sendable {
    /// `@unchecked Sendable`: one owner mutates it (a shared block is copied first), as an
    /// array's buffer.
    private final class Block: @unchecked Sendable {
        var base: UnsafeMutablePointer<ActivityRecord>?
        var count = 0
        var capacity = 0

        init(capacity: Int) {
            precondition(_isBitwiseTakable(ActivityRecord.self), "records are moved as bytes")
            reserve(capacity)
        }

        /// Room for `capacity` records in all (never less than `count`).
        func reserve(_ capacity: Int) {
            guard capacity > self.capacity else { return }
            guard let grown = realloc(base, capacity * MemoryLayout<ActivityRecord>.stride) else {
                fatalError("out of memory for \(capacity) records")
            }
            base = grown.bindMemory(to: ActivityRecord.self, capacity: capacity)
            self.capacity = capacity
        }

        /// A block of its own with the same records (their references retained).
        func copy() -> Block {
            let copy = Block(capacity: count)
            if count > 0 { copy.base!.initialize(from: base!, count: count) }
            copy.count = count
            return copy
        }

        deinit {
            base?.deinitialize(count: count)
            free(base)
        }
    }

    private var block: Block

    init() { block = Block(capacity: 0) }

    /// `count` records made in place by `initialize`, which sets how many it made (the first
    /// ones of the buffer, in order; kept, and released with the block, if it throws).
    init(unsafeUninitializedCapacity count: Int,
         initializingWith initialize: (UnsafeMutableBufferPointer<ActivityRecord>, inout Int) throws -> Void) rethrows {
        let block = Block(capacity: count)
        self.block = block
        var made = 0
        defer { block.count = made }
        try initialize(UnsafeMutableBufferPointer(start: block.base, count: count), &made)
    }

    init<Records: Sequence<ActivityRecord>>(_ records: Records) {
        block = Block(capacity: records.underestimatedCount)
        for record in records { append(record) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { block.count }

    subscript(i: Int) -> ActivityRecord {
        _read {
            precondition(i >= 0 && i < block.count, "index out of range")
            yield block.base![i]
        }
        _modify {
            precondition(i >= 0 && i < block.count, "index out of range")
            makeUnique()
            yield &block.base![i]
        }
    }

    mutating func append(_ record: consuming ActivityRecord) {
        makeUnique()
        // Doubled, as an array grows: the part not yet used is not resident (pages untouched).
        if block.count == block.capacity { block.reserve(Swift.max(16, block.capacity * 2)) }
        (block.base! + block.count).initialize(to: record)
        block.count += 1
    }

    /// Room for `capacity` records in all.
    mutating func reserveCapacity(_ capacity: Int) {
        makeUnique()
        block.reserve(capacity)
    }

    @discardableResult
    mutating func removeLast() -> ActivityRecord {
        precondition(block.count > 0, "no record to remove")
        makeUnique()
        block.count -= 1
        return (block.base! + block.count).move()
    }

    mutating func swapAt(_ i: Int, _ j: Int) {
        precondition(indices.contains(i) && indices.contains(j), "index out of range")
        guard i != j else { return }
        makeUnique()
        let record = (block.base! + i).move()
        (block.base! + i).moveInitialize(from: block.base! + j, count: 1)
        (block.base! + j).initialize(to: record)
    }

    func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<ActivityRecord>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: block.base, count: block.count))
    }

    mutating func withUnsafeMutableBufferPointer<R>(_ body: (UnsafeMutableBufferPointer<ActivityRecord>) throws -> R) rethrows -> R {
        makeUnique()
        return try body(UnsafeMutableBufferPointer(start: block.base, count: block.count))
    }

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&block) { block = block.copy() }
    }
}
