import Foundation
import Testing
@testable import LiveActivityMonitor

/// The table's records (`RecordStorage`): an array's answers and copy-on-write, each record
/// released once, and growth that moves the block instead of copying it.
@Suite struct RecordStorageTests {
    /// Random appends, removals, swaps and changes in place give what an array gives.
    @Test func answersAsAnArray() {
        let pool = ActivityTableTests.records(64, seed: 3)
        var storage = RecordStorage(), array: [ActivityRecord] = []
        var g: UInt64 = 11
        func next(_ bound: Int) -> Int {
            g = g &* 6364136223846793005 &+ 1442695040888963407
            return Int((g >> 33) % UInt64(bound))
        }
        for step in 0..<5_000 {
            switch next(5) {
            case 0, 1:
                storage.append(pool[step % pool.count]); array.append(pool[step % pool.count])
            case 2 where !array.isEmpty:
                #expect(storage.removeLast() == array.removeLast())
            case 3 where !array.isEmpty:
                let i = next(array.count), j = next(array.count)
                storage.swapAt(i, j); array.swapAt(i, j)
            case 4 where !array.isEmpty:
                let i = next(array.count)
                storage[i].tokenRotations += 1; array[i].tokenRotations += 1
            default: break
            }
        }
        #expect(Array(storage) == array)
        #expect(storage.withUnsafeBufferPointer { Array($0) } == array)
        #expect(RecordStorage(array).elementsEqual(array))
    }

    /// A copy shares the block until either changes: then the one that changes copies it.
    @Test func copiesOnWrite() {
        let records = ActivityTableTests.records(10, seed: 4)
        let original = RecordStorage(records)
        var changed = original
        changed[0].bookingID = "changed"
        changed.swapAt(1, 2)
        changed.append(records[3])
        var emptied = original
        while !emptied.isEmpty { emptied.removeLast() }
        #expect(Array(original) == records)
        #expect(changed[0].bookingID == "changed" && changed.count == 11)
        #expect(emptied.isEmpty)
    }

    /// Each record's references are released once: when removed, and with the storage.
    @Test func releasesEveryRecord() {
        weak var removed: TypeAndApp?
        weak var kept: TypeAndApp?
        do {
            var storage = RecordStorage()
            for i in 0..<100 {
                var record = ActivityTableTests.records(1, seed: UInt64(i))[0]
                record.attributesType = "Type\(i)"  // a block of its own
                storage.append(record)
            }
            removed = storage[99].typeAndApp
            kept = storage[0].typeAndApp
            storage.removeLast()
            #expect(removed == nil, "released on removal")
            #expect(kept != nil)
        }
        #expect(kept == nil, "released with the storage")
    }

    /// Records made in place before the maker throws are released with the storage.
    @Test func releasesWhatAFailedMakerMade() {
        struct Failed: Error {}
        weak var made: TypeAndApp?
        #expect(throws: Failed.self) {
            _ = try RecordStorage(unsafeUninitializedCapacity: 4) { buffer, initialized in
                var record = ActivityTableTests.records(1, seed: 2)[0]
                record.attributesType = "MadeBeforeTheFailure"  // a block of its own
                made = record.typeAndApp
                buffer.baseAddress!.initialize(to: record)
                initialized = 1
                throw Failed()
            }
        }
        #expect(made == nil)
    }

    /// Growing past its block does not hold two blocks at once (the restart's peak memory):
    /// the resident peak is reset, then a block of about 77 MB grows. An array of the same
    /// records, grown the same way, copies them into a new block, which the same measure sees
    /// (so the measure can fail).
    @Test func growsWithoutCopying() throws {
        let record = ActivityTableTests.records(1, seed: 1)[0]
        let n = 400_000
        var storage = RecordStorage()
        storage.reserveCapacity(n)
        for _ in 0..<n { storage.append(record) }
        let storageGrowth = try Self.peakGrowth { storage.append(record) }
        #expect(storage.count == n + 1 && storage[n] == record)

        // Filled to its capacity, so that the next append grows it.
        var array = [ActivityRecord](repeating: record, count: n)
        for _ in array.count..<array.capacity { array.append(record) }
        let arrayGrowth = try Self.peakGrowth { array.append(record) }

        let blockMB = Double(n * MemoryLayout<ActivityRecord>.stride) / 1e6
        #expect(arrayGrowth > blockMB / 2, "the measure sees an array's copy: \(arrayGrowth) MB")
        #expect(storageGrowth < blockMB / 8, "grown in place or moved: \(storageGrowth) MB")
    }

    /// How far `body` raises this process's resident peak (VmHWM), in MB, from where it is now.
    private static func peakGrowth(_ body: () -> Void) throws -> Double {
        // "5" resets the peak to the current resident set (proc(5), /proc/pid/clear_refs).
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = try status("VmRSS")
        body()
        return (try status("VmHWM") - before) / 1e6
    }

    private static func status(_ field: String) throws -> Double {
        let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        let kB = try #require(Double(line.split(separator: " ").dropFirst().first ?? ""))
        return kB * 1000
    }
}
