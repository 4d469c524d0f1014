/// The records made in place by several threads at once, each part in a slice of its
/// own, for start-up's parallel load (`EventStore.liveRecords`): no part is made apart and then
/// copied into the whole.
///
/// `@unchecked Sendable`: the threads share the buffer, but each initializes only its own slice
/// (the ranges are disjoint), and the records are read only once every thread has finished.
final class RecordSlices: @unchecked Sendable {
    private let buffer: UnsafeMutableBufferPointer<ActivityRecord>

    private init(_ buffer: UnsafeMutableBufferPointer<ActivityRecord>) {
        self.buffer = buffer
    }

    /// Makes one record in place: initializes the slot it is given and is true, or is false when
    /// there are no more (the slot left as it was). In place: a record returned is copied, and
    /// its strings retained and released, once more per row.
    typealias Reader = (UnsafeMutablePointer<ActivityRecord>) throws -> Bool

    /// The records of `ranges`' live rows, made by `ranges.readParts` on threads named
    /// `threadName`: each thread opens its reader once (`open`, which returns the reader of part
    /// `k`, called until it is false). Nil when a part got more or fewer records than it holds;
    /// then, and on an error, nothing is kept.
    static func make(_ ranges: LiveRowRanges, threadName: String,
                     open: @escaping @Sendable () throws -> (Int) throws -> Reader) throws -> RecordStorage? {
        var failure: (any Error)?
        var complete = false
        let records = RecordStorage(unsafeUninitializedCapacity: ranges.live) { buffer, initialized in
            let slices = RecordSlices(buffer)
            let read = ranges.readParts(threadName: threadName) {
                let reader = try open()
                return { k in try slices.fill(ranges.parts[k].positions, reader(k)) }
            }
            complete = read.error == nil && read.byPart.allSatisfy { $0 == true }
            guard !complete else { return initialized = ranges.live }
            for (k, filled) in read.byPart.enumerated() where filled == true { slices.clear(ranges.parts[k].positions) }
            failure = read.error
            initialized = 0
        }
        if let failure { throw failure }
        return complete ? records : nil
    }

    /// Makes the records of `range` with `next` until it is false; true when it made exactly as
    /// many as the range holds. Otherwise, and on an error, the slice is left uninitialized.
    private func fill(_ range: Range<Int>, _ next: Reader) throws -> Bool {
        var i = range.lowerBound
        do {
            while i < range.upperBound, try next(buffer.baseAddress! + i) { i += 1 }
            if i == range.upperBound {
                // One more row means the rows moved: read into a slot of its own, and dropped.
                let more = try withUnsafeTemporaryAllocation(of: ActivityRecord.self, capacity: 1) { spare in
                    guard try next(spare.baseAddress!) else { return false }
                    spare.baseAddress!.deinitialize(count: 1)
                    return true
                }
                if !more { return true }
            }
        } catch {
            clear(range.lowerBound..<i)
            throw error
        }
        clear(range.lowerBound..<i)
        return false
    }

    private func clear(_ range: Range<Int>) {
        (buffer.baseAddress! + range.lowerBound).deinitialize(count: range.count)
    }
}
