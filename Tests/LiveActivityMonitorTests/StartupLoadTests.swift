import Foundation
import JSON
import Prometheus
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// Start-up builds the live-activity table at once from the rows (`ActivityTable(loading:)`,
/// `MonitorState.load(records:)`): it must hold exactly what inserting the same rows one by
/// one with `put` builds — records, search index, kept gauges and their queue of changes,
/// channel subscribers, deadlines — on a database of random activities of every kind.
@Suite struct StartupLoadTests {
    static let budget = 3
    static let types = ["TimerWidgetAttributes", "LiveActivityAttributes", "DeliveryAttributes", "ÉtéAttributes"]

    /// A UUID-shaped id (`CompactID` keeps it as bytes), sharing a long prefix with its neighbours.
    static func uuid(_ i: Int, upper: Bool) -> String {
        String(format: upper ? "0000%04X-0000-4000-8000-%012X" : "0000%04x-0000-4000-8000-%012x", i % 16, i)
    }

    /// Random activities of every kind through the ingest path: pending (a start date ahead),
    /// stale (a stale date passed, or reported), ended with each dismissal kind, dismissed,
    /// subscribed to channels, priority-10 heavy (bursts), with and without bookings (some
    /// shared), ids in mixed case, some sharing long prefixes; the clock moves between them.
    static func fill(_ m: KeptGaugeTests.Driver, seed: UInt64, activities: Int) {
        var random = PushEventScannerTests.Seeded(state: seed)
        var now = TestServer.base
        var started: [String] = []
        var n = 0
        func key() -> String { n += 1; return "sl\(seed)-\(n)" }
        for i in 0..<activities {
            let id = ["Ride-\(i)", "ride-\(i)x", "a-0000000000000000-\(i)", "ÉTÉ-\(i)", Self.uuid(i, upper: true),
                      Self.uuid(i, upper: false)][i % 6]
            let booking: String? = switch Int.random(in: 0..<4, using: &random) {
            case 0: nil
            case 1: "BK-\(i / 3)"
            case 2: "bk-0000000000000000-\(i)"
            default: i.isMultiple(of: 2) ? "BK-\(i)" : Self.uuid(i, upper: true)
            }
            var start: [String: Any] = ["id": key(), "type": "activity.started", "activity_id": id,
                                        "attributes_type": types.randomElement(using: &random)!,
                                        "occurred_at": now - Double(Int.random(in: 0...600, using: &random)),
                                        "content_state": ["startedAt": now], "push_token": IngestTests.token]
            if let booking { start["booking_id"] = booking }
            if Bool.random(using: &random) { start["app"] = ["com.example.rides", "com.example.timer"].randomElement(using: &random)! }
            if Int.random(in: 0..<4, using: &random) == 0 { start["start_date"] = now + Double(Int.random(in: 60...7200, using: &random)) }
            if Bool.random(using: &random) { start["stale_date"] = now + Double(Int.random(in: -1800...3 * 3600, using: &random)) }
            if Int.random(in: 0..<3, using: &random) == 0 { start["channel_id"] = KeptGaugeTests.channels.randomElement(using: &random)! }
            if Bool.random(using: &random) { start["relevance_score"] = Double(Int.random(in: 0...100, using: &random)) / 100 }
            m.post([JSONValue(start)])
            started.append(id)
            // Then what happens to a few of those started so far.
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                let target = started.randomElement(using: &random)!
                if Int.random(in: 0..<6, using: &random) == 0 {
                    // A burst at priority 10: heavy for the next hour.
                    m.post((0..<Int.random(in: 4...8, using: &random)).map { k in
                        Scenario.push(target, key(), at: now - Double(k * 10), token: IngestTests.token,
                                      extra: ["content_state": ["startedAt": now]])
                    })
                } else {
                    var ids = started
                    m.post([KeptGaugeTests.event(target, started: &ids, now: now, key: key(), &random)])
                }
            }
            if Int.random(in: 0..<20, using: &random) == 0 {
                now += [30, 300, 1800, 3 * 3600].randomElement(using: &random)!
                m.time.set(now)
            }
        }
        // The last ones heavy at the end, whatever the clock did.
        for id in started.suffix(8) {
            m.post((0..<6).map { k in
                Scenario.push(id, key(), at: now - Double(k * 10), token: IngestTests.token, extra: ["content_state": ["startedAt": now]])
            })
        }
    }

    /// The live rows of the file at `path` loaded as start-up loads them (on `readers`
    /// connections at once), and inserted one by one.
    static func loadBothWays(_ path: String, at now: Double, readers: Int) throws -> (bulk: MonitorState, oneByOne: MonitorState) {
        let db = try Database(path: path)
        let bulk = try EventStore.load(db, reservedTypes: [], declaredShapes: [:], maxLiveActivities: 1_000_000,
                                       priority10Budget: budget, now: now, readers: readers)
        var oneByOne = MonitorState()
        oneByOne.records = ActivityTable(priority10Budget: budget)
        let rows = try db.prepare(ActivityRecord.selectHeldSQL + " WHERE dismissed_at IS NULL")
        while try rows.step() {
            let record = try ActivityRecord(row: rows, heldOnly: true)
            oneByOne.records.put(record)
        }
        oneByOne.records.keepGauges(priority10Budget: budget, from: now)
        return (bulk, oneByOne)
    }

    /// Everything the table and the deadline queue answer, compared.
    static func expectEqual(_ a: MonitorState, _ b: MonitorState, at now: Double) {
        var a = a, b = b
        #expect(a.records.count == b.records.count)
        let ids = b.records.withRecords { records in records.indices.map { records[$0].activityID } }
        for id in ids { #expect(a.records[id] == b.records[id], "record \(id)") }
        #expect(a.records.withRecords { records in records.indices.map { records[$0].activityID } }.sorted() == ids.sorted())

        let (x, y) = (a.records.searchMarks, b.records.searchMarks)
        #expect(a.records.searchIndex.count == b.records.searchIndex.count)
        #expect(x.count == y.count && zip(x, y).allSatisfy { !IDSearchIndex.less($0, $1) && !IDSearchIndex.less($1, $0) }, "search index entries")
        for q in ["r", "ride-1", "a-0000000000000000-1", "bk-", "bk-0000000000000000-2", "été", "zz", "0000", "0000000a-",
                  Self.uuid(10, upper: false)] {
            #expect(a.records.searchEntries(withPrefix: q, after: nil, max: 10_000).map { a.records.searchMark($0).activityID }
                    == b.records.searchEntries(withPrefix: q, after: nil, max: 10_000).map { b.records.searchMark($0).activityID }, "q=\(q)")
        }

        #expect(a.records.keptPhoneOrder != nil && a.records.keptPhoneOrder == b.records.keptPhoneOrder, "the wall's order")

        #expect(Set(a.records.subscribedChannels) == Set(b.records.subscribedChannels))
        for channel in b.records.subscribedChannels {
            #expect(a.records.subscriberRecords(of: channel.text).map(\.id) == b.records.subscriberRecords(of: channel.text).map(\.id))
        }

        // The kept gauges, and time moving them through their queues, instant by instant.
        #expect(a.records.gaugeTime == b.records.gaugeTime)
        for t in [now, now + 30, now + 61, now + 1800, now + 4 * 3600, now + 9 * 3600, now + 13 * 3600] {
            #expect(a.records.nextGaugeChange == b.records.nextGaugeChange, "next change before \(t - now)")
            a.records.advanceGauges(to: t)
            b.records.advanceGauges(to: t)
            let kept = a.records.gauges(at: t, priority10Budget: budget)
            #expect(kept == b.records.gauges(at: t, priority10Budget: budget), "gauges at +\(t - now)")
            #expect(kept == ActivityGauges.recount(a.records, at: t, budget: budget), "recount at +\(t - now)")
        }

        // The same deadlines: what falls due at each record's deadline, in turn.
        let instants = Set(b.records.withRecords { records in records.indices.compactMap { records[$0].nextDeadline } }).sorted()
        for t in instants { #expect(Set(a.records.popDueDeadlines(t).ids) == Set(b.records.popDueDeadlines(t).ids), "due at \(t - now)") }
        #expect(a.records.queuedDeadlines == 0 && b.records.queuedDeadlines == 0)
    }

    @Test(arguments: [1, 2] as [UInt64])
    func bulkLoadEqualsOneByOne(seed: UInt64) throws {
        try withInProcessMonitor(configure: { $0.priority10Budget = Self.budget }) { monitor in
            Self.fill(KeptGaugeTests.Driver(monitor.monitor, time: monitor.time), seed: seed, activities: 600)
            monitor.store.close()
            let now = monitor.time.value
            let (bulk, oneByOne) = try Self.loadBothWays(monitor.store.path, at: now, readers: 1)
            let kinds = Set(oneByOne.records.withRecords { r in r.indices.map { r[$0].state(at: now) } })
            #expect(kinds.isSuperset(of: [.active, .stale, .ended, .pending]), "every kind of live activity: \(kinds)")
            #expect(oneByOne.records.gauges(at: now, priority10Budget: Self.budget).heavy > 0, "some heavy")
            #expect(!oneByOne.records.subscribedChannels.isEmpty, "some subscribed")
            Self.expectEqual(bulk, oneByOne, at: now)
            // Read in ranges of rowids on several connections at once: the same rows.
            for readers in [2, 3, 7] {
                let (parallel, _) = try Self.loadBothWays(monitor.store.path, at: now, readers: readers)
                Self.expectEqual(parallel, oneByOne, at: now)
            }
        }
    }

    /// Of records with the same id, the last stays, in the place the first took (as `put` keeps it).
    @Test func repeatedIDsKeepTheLast() {
        let records = ActivityTableTests.records(200, seed: 5)
        var repeated = records
        for i in stride(from: 0, to: 200, by: 7) {
            var again = records[i]
            again.tokenRotations = i + 1
            again.bookingID = "again-\(i)"
            repeated.append(again)
        }
        let bulk = ActivityTable(loading: RecordStorage(repeated), priority10Budget: Self.budget, gaugesFrom: TestServer.base)
        var oneByOne = ActivityTable(priority10Budget: Self.budget)
        for record in repeated { oneByOne.put(record) }
        oneByOne.keepGauges(priority10Budget: Self.budget, from: TestServer.base)
        var a = MonitorState(), b = MonitorState()
        a.records = bulk
        b.records = oneByOne
        Self.expectEqual(a, b, at: TestServer.base)
        #expect(bulk.withRecords { r in r.indices.map { r[$0].activityID } }
                == oneByOne.withRecords { r in r.indices.map { r[$0].activityID } }, "the same order")
    }

    /// A load's records share one block of each attributes type and app (`TypeAndApp`), whichever
    /// reader made theirs (here each record's own: more blocks than are told apart by address),
    /// and the count by type (`assignLabels`) counts by bytes.
    @Test func loadedTypesAndAppsShareOneCopyEach() {
        let texts = ["com.example.RideActivityAttributes", "com.example.TimerActivityAttributes", "é-an-app-with-a-long-name"]
        var records = ActivityTableTests.records(300, seed: 9)
        for i in records.indices {
            // A String of its own per record (a copy of the bytes, not of the String).
            records[i].attributesType = String(decoding: Array(texts[i % 2].utf8), as: UTF8.self)
            records[i].app = i % 3 == 0 ? nil : String(decoding: Array(texts[2].utf8), as: UTF8.self)
        }
        let table = ActivityTable(loading: RecordStorage(records), priority10Budget: Self.budget, gaugesFrom: TestServer.base)
        let blocks = table.withRecords { r in Set(r.indices.map { ObjectIdentifier(r[$0].typeAndApp) }) }
        #expect(blocks.count == 4, "a block for each of the 4 pairs")
        #expect(table.countByType() == [ExactString(texts[0]): 150, ExactString(texts[1]): 150])
    }
}
