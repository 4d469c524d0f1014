import Foundation
import JSON
import LiveActivityWire
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// A live record leaves its delivery evidence's known contents to its row once the commit that
/// writes the row is done, holding only the ones applied since (a tail); a row write merges the
/// tail with the row's, and an observation reads them back first (docs/ARCHITECTURE.md, "Known
/// contents in the rows"). Checked against an oracle that keeps every record whole: the same
/// events through `StateEngine` alone.
@Suite(.serialized) struct KnownInRowTests {
    static let t0 = TestServer.base - 3 * 3600
    static let ids = ["a0", "a1", "a2"]

    /// The same events through the engine alone, its records never letting anything go.
    struct Oracle {
        var records: [String: ActivityRecord] = [:]
        var counters = MonitorCounters()
        var pushes = PushTally()
        var labels = AttributesTypeLabels()
        var shapes = ContentShapes(judging: true)
        var starts = PushToStartBook()
        var channels = ChannelBook()
        var seq: Int64 = 0

        /// As `CommitChanges.apply`, received at the test clock's time, numbered as the store numbers them.
        mutating func apply(_ text: String) {
            guard case .valid(let event) = EventValidator.validate(try! JSONParser.parse(text), index: 0) else {
                Issue.record("invalid: \(text)")
                return
            }
            seq += 1
            var record = event.activityID.flatMap { records[$0] }
            let outcome = StateEngine().apply(event, seq: seq, receivedAt: TestServer.base, to: &record,
                                              counters: &counters, pushes: &pushes, labels: &labels, shapes: &shapes,
                                              starts: &starts, channels: &channels)
            counters.count(outcome.effect, of: event.type)
            if let id = event.activityID { records[id] = record }
        }
    }

    /// One random stream: starts, then pushes, app updates and observations of 12 contents (so
    /// that observations match, and tails run past 8 between flushes), with flushes and restarts.
    struct Stream {
        var random: DemoRandom
        var t = KnownInRowTests.t0
        var n = 0

        mutating func pick(_ range: Range<Int>) -> Int { Int(random.next() % UInt64(range.count)) + range.lowerBound }

        mutating func start(_ id: String) -> String {
            n += 1
            return """
                {"id":"k\(n)","type":"activity.started","activity_id":"\(id)","booking_id":"BK-\(id)","attributes_type":"ShuttleAttributes",\
                "occurred_at":\(t),"content_state":{"v":0},"push_token":"\(IngestTests.token)"}
                """
        }

        mutating func next() -> String {
            n += 1
            t += Double(pick(1..<90))
            let id = KnownInRowTests.ids[pick(0..<KnownInRowTests.ids.count)]
            let content = #"{"v":\#(pick(0..<12))}"#
            switch pick(0..<10) {
            case 0..<6:
                return TextsInRowTests.push("k\(n)", id, at: t, content: content)
            case 6..<8:
                return """
                    {"id":"k\(n)","type":"activity.updated","activity_id":"\(id)","occurred_at":\(t),"timestamp":\(t),\
                    "content_state":\(content)}
                    """
            default:
                // Seen a while after it was sent: some pushes are past the grace, some not.
                return """
                    {"id":"k\(n)","type":"activity.observed","activity_id":"\(id)","occurred_at":\(t + Double(pick(0..<300))),\
                    "content_state":\(content)}
                    """
            }
        }
    }

    static func post(_ server: TestServer, _ texts: [String], _ oracle: inout Oracle) throws {
        let response = try server.post("[" + texts.joined(separator: ",") + "]")
        #expect(response.status == 200, "\(response.text)")
        for text in texts { oracle.apply(text) }
    }

    static func rows(_ server: TestServer) throws -> [String: [UInt8]?] {
        let db = try Database(path: server.configuration.databasePath, mode: .readOnly)
        var rows: [String: [UInt8]?] = [:]
        for row in try db.query("SELECT activity_id, delivery FROM activities") {
            rows[row[0].textValue ?? ""] = row[1].blobValue ?? row[1].textValue.map { Array($0.utf8) }
        }
        return rows
    }

    /// The store's evidence as the engine would see it (the row's known contents, then the tail
    /// memory holds), its counters, its rows once flushed, and its pages, against the oracle's.
    static func compare(_ server: TestServer, _ oracle: Oracle, flushed: Bool, _ note: String) throws {
        let rows = try Self.rows(server)
        let memory = server.server.store.withState { s in Dictionary(uniqueKeysWithValues: s.records.withRecords { $0.map { ($0.activityID, $0) } }) }
        for id in ids {
            let expected = oracle.records[id]!.delivery
            var held = memory[id]!.delivery
            if held.knownInRow {
                held.takeBack(row: DeliveryEvidence(stored: rows[id] ?? nil).known)
            }
            #expect(held == expected, "\(note): \(id) as the engine sees it")
            if flushed {
                #expect(!memory[id]!.delivery.knownInRow || memory[id]!.delivery.known.isEmpty, "\(note): \(id) holds no tail")
                #expect(rows[id] ?? nil == expected.stored, "\(note): \(id)'s row")
            }
            let page = try server.json("/api/activities/\(id)")["delivery"]
            #expect(page?["missed"]?.int64Value == Int64(expected.missed), "\(note): \(id) page")
            let confirmed = page?["last_confirmed_at"]?.stringValue.flatMap(RFC3339.parse)
            #expect((confirmed == nil) == (expected.lastConfirmedAt == nil), "\(note): \(id) page")
            if let confirmed, let at = expected.lastConfirmedAt { #expect(abs(confirmed - at) < 0.001, "\(note): \(id) page") }
        }
        let counters = server.server.store.withState { $0.counters }
        for result in ["confirmed", "missed"] {
            #expect(counters.value(MonitorMetrics.pushDeliveries, result) == oracle.counters.value(MonitorMetrics.pushDeliveries, result),
                    "\(note): \(result)")
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64]) func randomStreamsSeeTheListsAStoreKeepingThemAllWouldSee(seed: UInt64) throws {
        let server = try TestServer { $0.catchUpInterval = 3600 }
        defer { server.stop() }
        var oracle = Oracle()
        var stream = Stream(random: DemoRandom(seed: seed))
        try Self.post(server, Self.ids.map { stream.start($0) }, &oracle)
        // A tail past the 8 a row holds: 11 pushes between two flushes (memory keeps the newest 8).
        server.server.store.catchUp()
        let t = stream.t
        try Self.post(server, (1...11).map { TextsInRowTests.push("many-\($0)", "a0", at: t + Double($0), content: #"{"v":\#($0)}"#) },
                      &oracle)
        stream.t += 12
        #expect(server.server.store.withState { $0.records["a0"]!.delivery.known.count } == DeliveryEvidence.maxKnown)
        try Self.compare(server, oracle, flushed: false, "11 pushes")
        server.server.store.catchUp()
        try Self.compare(server, oracle, flushed: true, "11 pushes, flushed")
        var longestTail = 0
        var fullRows = 0
        for round in 0..<40 {
            // Batches of up to 30, then a flush, a restart or neither.
            let batch = (0..<stream.pick(1..<31)).map { _ in stream.next() }
            try Self.post(server, batch, &oracle)
            longestTail = max(longestTail, server.server.store.withState { s in
                s.records.withRecords { $0.filter(\.delivery.knownInRow).map(\.delivery.known.count).max() ?? 0 }
            })
            try Self.compare(server, oracle, flushed: false, "round \(round)")
            switch stream.pick(0..<6) {
            case 0..<3:
                server.server.store.catchUp()
                try Self.compare(server, oracle, flushed: true, "round \(round), flushed")
            case 3:
                try server.restart()
                try Self.compare(server, oracle, flushed: true, "round \(round), restarted")
            default:
                break
            }
            fullRows += try Self.rows(server).values.filter { ($0?.count ?? 0) == DeliveryEvidence.headBytes + DeliveryEvidence.maxKnown * DeliveryEvidence.entryBytes }.count
        }
        #expect(longestTail > 1, "tails of more than one")
        #expect(fullRows > 0, "rows held exactly 8")
    }

    /// Rows written before version 2 read after an upgrade: version 1 (a count byte) keeps its
    /// entries in the row and is merged from the right offset; the JSON form is read whole.
    @Test(arguments: ["v1", "json"]) func olderFormsReadAfterAnUpgrade(form: String) throws {
        let first = try TestServer { $0.catchUpInterval = 3600 }
        var oracle = Oracle()
        var stream = Stream(random: DemoRandom(seed: 99))
        try Self.post(first, Self.ids.map { stream.start($0) }, &oracle)
        // Fewer than 8 known each: a merge misplaced by the count byte would not be cut off.
        try Self.post(first, (0..<9).map { _ in stream.next() }, &oracle)
        first.server.store.catchUp()
        #expect(Self.ids.allSatisfy { oracle.records[$0]!.delivery.known.count < DeliveryEvidence.maxKnown })
        let directory = first.directory
        first.stop(keepFiles: true)
        // The rows as the old writers left them.
        do {
            let db = try Database(path: directory + "/monitor.sqlite")
            for id in Self.ids {
                let evidence = oracle.records[id]!.delivery
                try db.run("UPDATE activities SET delivery = ? WHERE activity_id = ?",
                           [form == "v1" ? .blob(DeliveryEvidenceRowTests.version1(evidence)) : .text(Self.json(evidence)), .text(id)])
            }
            // Written before `held_record` too: the upgrade adds and fills it (a JSON form's row left without).
            try HeldRecordTests.rewindToBeforeHeldRecord(db)
        }

        let server = try TestServer(directory: directory) { $0.catchUpInterval = 3600 }
        defer { server.stop() }
        let loaded = server.server.store.withState { s in s.records.withRecords { $0.map(\.delivery) } }
        #expect(loaded.allSatisfy { $0.knownInRow == (form == "v1") }, "v1 leaves its entries in the row; JSON is read whole")
        try Self.compare(server, oracle, flushed: false, "\(form) loaded")
        // Pushes alone first: the next row write merges them with the old row's entries in SQL.
        let t = stream.t
        try Self.post(server, Self.ids.enumerated().map { i, id in
            TextsInRowTests.push("up-\(id)", id, at: t + Double(i + 1), content: #"{"v":\#(20 + i)}"#)
        }, &oracle)
        stream.t += 4
        try Self.compare(server, oracle, flushed: false, "\(form) pushes")
        server.server.store.catchUp()
        try Self.compare(server, oracle, flushed: true, "\(form) pushes merged")
        for round in 0..<6 {
            try Self.post(server, (0..<12).map { _ in stream.next() }, &oracle)
            try Self.compare(server, oracle, flushed: false, "\(form) round \(round)")
            server.server.store.catchUp()
            try Self.compare(server, oracle, flushed: true, "\(form) round \(round), flushed")
        }
    }

    static func json(_ e: DeliveryEvidence) -> String {
        var object: [(String, JSONValue)] = [("missed", .number(JSONNumber(Double(e.missed))))]
        if let confirmed = e.lastConfirmedAt { object.append(("confirmed_at", .number(JSONNumber(confirmed)))) }
        object.append(("known", .array(e.known.map { k in
            var item: [(String, JSONValue)] = [("digest", .string(String(k.digest, radix: 16))),
                                               ("timestamp", .number(JSONNumber(k.timestamp)))]
            if let push = k.push {
                item.append(("push", .number(JSONNumber(Double(push.seq)))))
                item.append(("sent_at", .number(JSONNumber(push.sentAt))))
            }
            return .object(JSONObject(item))
        })))
        return JSONValue.object(JSONObject(object)).jsonString
    }
}
