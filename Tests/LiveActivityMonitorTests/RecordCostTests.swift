import Foundation
import Glibc
import JSON
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// What one live activity costs in memory (docs/ARCHITECTURE.md, "What one record costs"):
/// records built as the writer builds them (the bench's dataset: half rides, half timers, each a
/// start and 9 pushes, decoded and applied by the state engine) and as the loader builds them
/// (read back from their `activities` rows), counted by the allocator (`mallinfo2`).
@Suite(.serialized) struct RecordCostTests {
    static let activities = 10_000
    static let pushes = 9
    static let t0 = 1_800_000_000.0

    /// Bytes the allocator has handed out and not had back, over all arenas: glibc's
    /// `malloc_info` report (malloc.h is not in Swift's Glibc module, so it is looked up), its
    /// arenas' memory less their free chunks, plus its mmapped chunks.
    static func allocated() -> Int {
        typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
        guard let symbol = dlsym(nil, "malloc_info") else { return -1 }
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return -1 }
        _ = unsafeBitCast(symbol, to: MallocInfo.self)(0, stream)
        fclose(stream)
        defer { free(buffer) }
        guard let buffer else { return -1 }
        // The totals over all arenas follow the last `</heap>`.
        let report = String(cString: buffer)
        guard let totals = report.range(of: "</heap>", options: .backwards).map({ report[$0.upperBound...] }) else { return -1 }
        /// The `size` attribute of the element that starts with `tag`.
        func total(_ tag: String) -> Int {
            guard let element = totals.range(of: tag),
                  let size = totals[element.upperBound...].range(of: #"size=""#) else { return 0 }
            return Int(totals[size.upperBound...].prefix { $0.isNumber }) ?? 0
        }
        return total(#"<system type="current""#) - total(#"<total type="fast""#) - total(#"<total type="rest""#)
            + total(#"<total type="mmap""#)
    }

    /// Ids shaped as production's (and the bench's): ActivityKit's activity ids are UUIDs in
    /// upper case, and so are many backends' booking ids.
    static func activityID(_ i: Int) -> String { String(format: "%08X-C36C-495A-93FC-%012X", i, i) }
    static func bookingID(_ i: Int) -> String { String(format: "%08X-0B0C-4A1D-8E2F-%012X", i, i) }

    /// The bench's `Dataset` lines for activity `i` (Sources/live-activity-monitor-bench).
    static func lines(_ i: Int) -> [String] {
        let t = t0 + Double(i) * 0.01
        let token = String(repeating: "0", count: 64 - String(i + 1, radix: 16).count) + String(i + 1, radix: 16)
        let start = i % 2 == 0
            ? #"{"id":"gs\#(i)","type":"activity.started","activity_id":"\#(activityID(i))","booking_id":"\#(bookingID(i))","attributes_type":"LiveActivityAttributes","occurred_at":\#(t),"app":"com.example.rides","attributes":{"driverName":"Ana","rating":"4.9"},"content_state":{"driverName":"Ana","rating":"4.9","progress":0,"duration":12},"stale_date":\#(t + 4 * 3600),"relevance_score":\#(Double(i % 100) / 100),"push_token":"\#(token)"}"#
            : #"{"id":"gs\#(i)","type":"activity.started","activity_id":"\#(activityID(i))","booking_id":"\#(bookingID(i))","attributes_type":"TimerWidgetAttributes","occurred_at":\#(t),"app":"com.example.timer","attributes":{"startedAt":\#(Int(t))},"content_state":{"elapsed":0,"paused":false},"relevance_score":\#(Double(i % 100) / 100),"push_token":"\#(token)"}"#
        return [start] + (1...pushes).map { k in
            let at = t + Double(k) * 60
            let content = i % 2 == 0
                ? #"{"driverName":"Ana","rating":"4.9","progress":\#(Double(k) / 10),"duration":\#(12 - k)}"#
                : #"{"elapsed":\#(k * 60),"paused":false}"#
            return #"{"id":"gp\#(i)-\#(k)","type":"push.sent","activity_id":"\#(activityID(i))","occurred_at":\#(at),"event":"update","priority":\#(k % 4 == 0 ? 5 : 10),"status":200,"latency_ms":\#(20 + (i + k) % 60).5,"push_token":"\#(token)","timestamp":\#(at),"payload_bytes":212,"content_state":\#(content)}"#
        }
    }

    /// The records as the writer leaves them, each put in the table as its events are applied.
    static func served() throws -> [ActivityRecord] {
        var records: [ActivityRecord] = []
        records.reserveCapacity(activities)
        var counters = MonitorCounters(), tally = PushTally(), labels = AttributesTypeLabels()
        var shapes = ContentShapes(judging: true), starts = PushToStartBook(), channels = ChannelBook()
        var seq: Int64 = 0
        for i in 0..<activities {
            let events = try IngestDecoder().decode(Array(lines(i).joined(separator: "\n").utf8), format: .ndjson)
            var record: ActivityRecord?
            for event in events {
                seq += 1
                _ = StateEngine().apply(event, seq: seq, receivedAt: event.occurredAt, to: &record, counters: &counters,
                                        pushes: &tally, labels: &labels, shapes: &shapes, starts: &starts, channels: &channels)
            }
            records.append(try #require(record))
        }
        return records
    }

    /// What a table of `records` costs per record, in all (their heap blocks, its contiguous
    /// storage and its indexes),
    /// and the heap bytes each part of a record holds there: freed when every record is put back
    /// with that part empty (the table owns the records alone by then).
    /// `since`: what `allocated()` said before the records were made.
    static func cost(of records: consuming [ActivityRecord], since before: Int) -> (total: Int, parts: [(String, Int)]) {
        let n = records.count
        var table = ActivityTable()
        for r in records { table.put(r) }
        records = []
        let total = (allocated() - before) / n
        let ids = table.withRecords { $0.map(\.activityID) }
        func freed(_ name: String, _ strip: (inout ActivityRecord) -> Void) -> (String, Int) {
            let before = allocated()
            for id in ids {
                var r = table[id]!
                strip(&r)
                table.put(r)
            }
            return (name, (before - allocated()) / n)
        }
        let parts = [
            freed("delivery") { $0.delivery = DeliveryEvidence() },
            freed("priority10") { $0.priority10 = Priority10Minutes() },
            freed("content_state") { $0.contentState = nil },
            freed("attributes") { $0.attributes = nil },
            freed("token fingerprint") { $0.tokenFingerprint = nil },
            freed("last push") { $0.lastPush = nil },
        ]
        return (total, parts)
    }

    /// What the table's indexes cost per record, each built alone the way the table builds it
    /// (by positions, which `ids` stands for), and the forms they replaced (by id, "before"),
    /// measured in the same run.
    static func indexCost(ids: [String], bookings: [String?]) -> [(String, Int)] {
        let n = ids.count
        func measure(_ name: String, _ build: () -> Any) -> (String, Int) {
            let before = allocated()
            let built = build()
            let cost = (allocated() - before) / n
            withExtendedLifetime(built) {}
            return (name, cost)
        }
        let compact = ids.map(CompactID.init), compactBookings = bookings.map { $0.map(CompactID.init) }
        func id(_ i: Int) -> CompactID { compact[i] }
        return [
            measure("positions before ([String: Int])") {
                var positions: [String: Int] = [:]
                for (i, id) in ids.enumerated() { positions[id] = i }
                return positions
            },
            measure("positions (IDPositions, put one by one)") {
                var positions = IDPositions()
                for i in ids.indices { positions.set(compact[i], to: i, id: id) }
                return positions
            },
            measure("positions (IDPositions, loaded)") { IDPositions(count: n, id: id) },
            measure("IDSearchIndex") {
                var index = IDSearchIndex()
                for (i, booking) in compactBookings.enumerated() {
                    index.insert(at: i, activityID: compact[i], bookingID: booking) { (compact[$0], compactBookings[$0]) }
                }
                return index
            },
            measure("DeadlineQueue before (one entry, by id)") {
                var queue = DeadlineQueue<String>()
                for (i, id) in ids.enumerated() { queue.push(Double(i), id) }
                return queue
            },
            measure("DeadlineQueue (one entry)") {
                var queue = DeadlineQueue<Int32>()
                for i in ids.indices { queue.push(Double(i), Int32(i)) }
                return queue
            },
        ]
    }

    /// What the kept triage sets cost per record, built as the table builds them, an hour after
    /// the starts: these records have no problem, so nothing (the sets hold only records that
    /// have one, and time adds no wake-up for them: `TriageProblem.nextChange`).
    static func triageCost(_ records: [ActivityRecord]) -> (String, Int) {
        let now = t0 + 3600
        let before = allocated()
        let sets = records.withUnsafeBufferPointer { TriageIndex($0, at: now, budget: EngineSettings.defaultPriority10Budget) }
        let cost = (allocated() - before) / records.count
        let empty = sets.contents.allSatisfy { $0.isEmpty }
        #expect(empty, "no record of the dataset has a problem")
        let noWakeUp = records.allSatisfy { TriageProblem.nextChange(of: $0, after: now) == nil }
        #expect(noWakeUp)
        withExtendedLifetime(sets) {}
        return ("TriageIndex (no problem)", cost)
    }

    @Test func oneLiveActivityCostsWhatItMust() throws {
        let beforeServed = Self.allocated()
        let records = try Self.served()
        // Checked here, counted as nothing: the values made to check them are freed at once.
        #expect(records.map(\.delivery.known.capacity).max()! <= DeliveryEvidence.maxKnown)
        #expect(records.allSatisfy {
            if case .digits? = $0.tokenFingerprint.map(TokenFingerprint.Stored.init) { true } else { false }
        })
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("record-cost-\(getpid()).sqlite").path
        defer { unlink(path) }
        let reloaded = try {
            let db = try Database(path: path)
            // A page cache of a few pages: the measure is of records, not of SQLite's cache.
            try db.execute("PRAGMA cache_size = 4")
            // Keyed by the id as the store's table is (a whole write is an upsert on it).
            try db.execute("CREATE TABLE activities ("
                + RowWrite.columns.map { $0 == "activity_id" ? "activity_id TEXT PRIMARY KEY" : $0 }.joined(separator: ", ") + ")")
            try db.transaction {
                let insert = try db.prepare(RowWrite.whole.sql)
                for r in records {
                    try r.bind(to: insert, as: .whole)
                    _ = try insert.step()
                    insert.reset()
                }
            }
            var withTexts: [ActivityRecord] = []
            let all = try db.prepare(ActivityRecord.selectSQL)
            while try all.step() { withTexts.append(try ActivityRecord(row: all)) }
            #expect(withTexts == records)
            withTexts = []
            // As start-up reads them: without the texts, which stay in the rows.
            let beforeLoaded = Self.allocated()
            var loaded: [ActivityRecord] = []
            let select = try db.prepare(ActivityRecord.selectHeldSQL)
            while try select.step() { loaded.append(try ActivityRecord(row: select, heldOnly: true)) }
            #expect(loaded == records.map { var r = $0; r.leaveToRow(); return r })
            #expect(loaded.allSatisfy { $0.textsInRow == .both && $0.attributes == nil && $0.contentState == nil })
            #expect(loaded.map(\.delivery.known.capacity).max()! <= DeliveryEvidence.maxKnown)
            return Self.cost(of: consume loaded, since: beforeLoaded)
        }()
        let indexes = Self.indexCost(ids: records.map(\.activityID), bookings: records.map(\.bookingID))
            + [Self.triageCost(records)]
        // After the flush that writes their rows: what the rows hold let go (`leaveToRow`); made
        // again, so that they share no block with `records`.
        let beforeFlushed = Self.allocated()
        let flushed = Self.cost(of: try Self.served().map { var r = $0; r.leaveToRow(); return r }, since: beforeFlushed)
        // Served until the flush that writes their rows (texts held), then (texts let go).
        let served = Self.cost(of: consume records, since: beforeServed)
        func line(_ parts: [(String, Int)]) -> String { parts.map { "\($0) \($1)" }.joined(separator: ", ") }
        print("""
            record cost (\(Self.activities) live activities, a start and \(Self.pushes) pushes each), bytes:
              ActivityRecord: size \(MemoryLayout<ActivityRecord>.size), stride \(MemoryLayout<ActivityRecord>.stride); \
            last push \(MemoryLayout<ActivityRecord.LastPush.Stored>.size), Priority10Minutes \(MemoryLayout<Priority10Minutes>.size), \
            DeliveryEvidence \(MemoryLayout<DeliveryEvidence>.size) (Known stride \(MemoryLayout<DeliveryEvidence.Known>.stride)), \
            Undecodable? \(MemoryLayout<ActivityRecord.Undecodable?>.size)
              table per record, all in: served before the flush \(served.total), \
            after it \(flushed.total), loaded at start-up \(reloaded.total)
              heap by part, served: \(line(served.parts))
              heap by part, after the flush: \(line(flushed.parts))
              heap by part, loaded: \(line(reloaded.parts))
              indexes, each alone: \(line(indexes))
            """)
        // The allocator's figures above are printed, not checked: other suites allocate in the
        // same process at the same time. What this change bought is checked by construction:
        // a known content in 32 bytes and at most `maxKnown` of them in one block, a record
        // within 200 bytes, a fingerprint kept as 8 bytes, not as text (checked above), the
        // priority-10 window in 12 (its minutes packed), each id in 17 (a UUID's bytes, not a
        // String and a heap block).
        #expect(MemoryLayout<DeliveryEvidence.Known>.stride == 32)
        #expect(MemoryLayout<ActivityRecord>.stride <= 192)
        #expect(MemoryLayout<CompactID>.size == 17 && MemoryLayout<CompactID?>.size == 17)
        // The type and app in one block the records share: a reference, not two strings.
        #expect(MemoryLayout<TypeAndApp>.size == 8)
        #expect(MemoryLayout<Priority10Minutes>.size == 12)
        // The indexes name a record by its 4-byte position, not its id.
        #expect(MemoryLayout<IDSearchIndex.Entry>.stride == 4)
        #expect(MemoryLayout<(at: Double, id: Int32)>.stride == 16)
        let ids = (0..<Self.activities).map { CompactID("ga\($0)") }
        let loaded = IDPositions(count: ids.count) { ids[$0] }
        var put = IDPositions()
        for i in ids.indices { put.set(ids[i], to: i) { ids[$0] } }
        #expect(4 * loaded.slotCount <= 8 * ids.count && 4 * put.slotCount <= 8 * ids.count, "at most 8 bytes a record")
    }

    /// A fingerprint reads back exactly as it was set, whatever its text; the 16 lowercase hex
    /// digits `TokenFingerprint.of` makes are kept as their 8 bytes.
    @Test(arguments: [TokenFingerprint.of("80a1c0ffee"), "0000000000000000", "ffffffffffffffff", "0123456789abcdef",
                      "0123456789ABCDEF", "0123456789abcde", "0123456789abcdef0", "", "é123456789abcdef", "g123456789abcdef",
                      "0123456789abcde:", "0123456789abcde`", "/123456789abcdef"])
    func fingerprintsReadBackAsTheyCame(_ text: String) {
        var record = ActivityRecord(activityID: "a", bookingID: nil, attributesType: "T", startedAt: 0)
        record.tokenFingerprint = text
        #expect(record.tokenFingerprint == text)
        #expect(record.tokenFingerprint?.utf8.elementsEqual(text.utf8) == true)
        #expect(record.hasTokenFingerprint(text) && !record.hasTokenFingerprint(text + "0") && !record.hasTokenFingerprint(nil))
        let packed = text.utf8.count == 16 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
        if case .digits = TokenFingerprint.Stored(text) { #expect(packed) } else { #expect(!packed) }
    }

    /// The fields kept apart read back as set, and a record whose uncommon fields are all set back
    /// to nil equals one that never had them.
    @Test func uncommonFieldsReadBackAndLeaveNoTrace() {
        let plain = ActivityRecord(activityID: "a", bookingID: "b", attributesType: "T", startedAt: 10)
        var r = plain
        r.startDate = 20; r.channelID = "c"; r.dismissalDate = 30; r.dismissedAt = 40
        r.tokenInvalidReason = "Unregistered"; r.undecodable = .init(at: 50, detail: "d")
        #expect(r.startDate == 20 && r.channelID == "c" && r.dismissalDate == 30 && r.dismissedAt == 40)
        #expect(r.tokenInvalidReason == "Unregistered" && r.undecodable == .init(at: 50, detail: "d"))
        let copy = r
        r.channelID = nil
        #expect(copy.channelID == "c" && r.channelID == nil && r != plain)
        r.startDate = nil; r.dismissalDate = nil; r.dismissedAt = nil; r.tokenInvalidReason = nil; r.undecodable = nil
        #expect(r == plain)
        // The last push: its reason among them, the rest in the record; no push is none at all.
        let refused = ActivityRecord.LastPush(status: 410, reason: "Unregistered", latencyMs: 12.5, priority: 10, at: 60)
        r.lastPush = refused
        #expect(r.lastPush == refused && r != plain)
        r.lastPush = .init(status: 200, reason: nil, latencyMs: 3, priority: 5, at: 70)
        #expect(r.lastPush == .init(status: 200, reason: nil, latencyMs: 3, priority: 5, at: 70))
        r.lastPush = nil
        #expect(r.lastPush == nil && r == plain)
        r.relevanceScore = 0; r.staleDate = -0.5
        #expect(r.relevanceScore == 0 && r.staleDate == -0.5 && r.endedAt == nil && r != plain)
    }

    /// The two texts, joined in one block (`HeldTexts`), read back as set, in any order, with
    /// either or both nil, multi-byte text at the join included; records equal when their texts are.
    @Test func textsReadBackAsSetInAnyOrder() throws {
        let values: [JSONText?] = [nil, JSONText(written: "{}"), JSONText(written: #"{"title":"é🚕","n":1}"#),
                                   JSONText(written: #"{"a":"\#(String(repeating: "x", count: 40))"}"#)]
        for attributes in values {
            for content in values {
                var first = ActivityRecord(activityID: "a", bookingID: nil, attributesType: "T", startedAt: 0)
                first.attributes = attributes
                first.contentState = content
                var second = ActivityRecord(activityID: "a", bookingID: nil, attributesType: "T", startedAt: 0)
                second.contentState = JSONText(written: "[1]")
                second.contentState = content
                second.attributes = attributes
                for r in [first, second] {
                    #expect(r.attributes == attributes && r.contentState == content, "\(String(describing: attributes)) \(String(describing: content))")
                }
                #expect(first == second)
                var other = second
                other.attributes = JSONText(written: "[0]")
                #expect(other != first)
            }
        }
    }
}
