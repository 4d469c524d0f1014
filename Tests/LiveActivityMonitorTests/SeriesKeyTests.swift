import Foundation
import JSON
import Prometheus
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// A persisted series key must read back whole whatever its label values hold, and nothing
/// stored may make a scrape trap (issue: one ingest request with "A\u{1F}app" as its attributes
/// type made every later start's first scrape stop the process).
@Suite struct SeriesKeyTests {
    /// Unicode's control characters: C0, DEL and C1.
    static let controlScalars: [Unicode.Scalar] = (Array(0x00...0x1F) + [0x7F] + Array(0x80...0x9F)).map { Unicode.Scalar($0)! }

    @Test func aStoredKeyReadsBackWholeWhateverItsValuesHold() {
        let awkward = Self.controlScalars.map { "A\(Character($0))app" } + ["", "\"", "\\", "[\"x\"]", "é", "\u{2028}", "other"]
        for value in awkward {
            let key = SeriesKey(MonitorMetrics.started.name, [value, "app"])
            #expect(SeriesKey(storageKey: key.storageKey) == key, "\(value.unicodeScalars.map(\.value))")
        }
        #expect(SeriesKey(storageKey: "liveactivity_x\u{1F}a") == nil)
        #expect(SeriesKey(storageKey: "[1]") == nil)
        #expect(SeriesKey(storageKey: "[]") == nil)
        #expect(SeriesKey.stored("junk") == SeriesKey("", ["junk"]))
    }

    @Test func firstFormKeysMeanTheirSeriesAndASplitTypeBecomesOther() {
        let started = MonitorMetrics.started.name, push = MonitorMetrics.pushRequests.name
        let cases: [(String, SeriesKey)] = [
            ("\(started)\u{1F}TimerWidgetAttributes\u{1F}app", SeriesKey(started, ["TimerWidgetAttributes", "app"])),
            ("\(started)\u{1F}A\u{1F}app\u{1F}app", SeriesKey(started, [AttributesTypeLabels.other, "app"])),
            ("\(started)\u{1F}\u{1F}push_to_start\u{1F}app", SeriesKey(started, [AttributesTypeLabels.other, "app"])),
            ("\(started)\u{1F}Evil\u{1F}Type", SeriesKey(started, ["Evil", "Type"])),
            ("\(MonitorMetrics.dismissed.name)\u{1F}A\u{1F}B", SeriesKey(MonitorMetrics.dismissed.name, [AttributesTypeLabels.other])),
            ("\(MonitorMetrics.dismissed.name)\u{1F}\u{7}bell", SeriesKey(MonitorMetrics.dismissed.name, [AttributesTypeLabels.other])),
            ("\(push)\u{1F}update\u{1F}10\u{1F}none\u{1F}200", SeriesKey(push, ["update", "10", "none", "200"])),
            ("\(MonitorMetrics.ingestDuplicates.name)", SeriesKey(MonitorMetrics.ingestDuplicates.name, [])),
            ("garbage", SeriesKey("garbage", [])),
        ]
        for (legacy, expected) in cases {
            #expect(CounterKeyMigrations.series(legacyKey: legacy) == expected, "\(legacy.debugDescription)")
        }
    }

    @Test func seriesThatFitNoFamilyAreLeftOutAndCounted() throws {
        var counters = MonitorCounters()
        counters.counters[SeriesKey(MonitorMetrics.started.name, ["A", "app", "app"])] = 1
        counters.counters[SeriesKey(MonitorMetrics.started.name, ["A"])] = 1
        counters.counters[SeriesKey("", ["junk"])] = 1
        counters.counters[SeriesKey(MonitorMetrics.started.name, ["A", "app"])] = 4
        let text = TextFormat.render(StoredFamilies.families(counters, types: ["A"]))
        #expect(text.contains("liveactivity_unrenderable_series 3\n"))
        #expect(text.contains("liveactivity_activities_started_total{attributes_type=\"A\",source=\"app\"} 4\n"))
        let (status, output) = try Promtool.checkMetrics(text)
        #expect(status == 0, "\(output)")
    }

    /// Every control character in every identifier field is refused with 422 — through the
    /// general validator (an array) and through the one-object push fast path — and the server
    /// then starts again and scrapes cleanly.
    @Test func everyControlCharacterInEveryIdentifierFieldIsRefusedAndARestartScrapes() throws {
        let server = try TestServer()
        defer { server.stop() }
        // Every identifier row of the schema (EventSchema) that the type allows.
        func identifiers(on kinds: EventKinds) -> [String] {
            EventSchema.fields.filter { row in
                guard case .identifier = row.kind else { return false }
                return row.allowed.isSuperset(of: kinds)
            }.map(\.label)
        }
        let startedFields = identifiers(on: .activityStarted)
        let pushFields = identifiers(on: .pushSent)
        #expect(startedFields.count >= 5 && pushFields.count >= 8)
        var events: [JSONValue] = [], expected: [(field: String, index: Int)] = []
        for scalar in Self.controlScalars {
            let bad = JSONValue.string("A\(Character(scalar))app")
            for field in startedFields {
                var event = Self.started(id: "s-\(scalar.value)-\(field)")
                event[field] = bad
                expected.append((field, events.count))
                events.append(.object(event))
            }
            for field in pushFields {
                var push = Self.push(id: "p-\(scalar.value)-\(field)")
                push[field] = bad
                expected.append((field, events.count))
                events.append(.object(push))
                // Alone, a push.sent is a candidate for the fast path.
                let response = try server.post(JSONValue.object(push).jsonString)
                #expect(response.status == 422, "push \(field) U+\(String(scalar.value, radix: 16)): \(response.text)")
                #expect(response.text.contains("\"field\":\"\(field)\""), "\(response.text)")
            }
        }
        // At most 1000 events a request: in requests of 1000.
        for first in stride(from: 0, to: events.count, by: 1000) {
            let part = Array(events[first..<min(first + 1000, events.count)])
            let wanted = expected.filter { (first..<first + part.count).contains($0.index) }
            let response = try server.post(events: part)
            #expect(response.status == 422)
            guard case .object(let body) = try JSONParser.parse(response.body), case .array(let errors)? = body["errors"] else {
                Issue.record("no errors in \(response.text)")
                return
            }
            #expect(errors.count == wanted.count)
            for (error, want) in zip(errors, wanted) {
                #expect(error == .object(["index": .number(JSONNumber(want.index - first)), "field": .string(want.field),
                                          "error": .string(IdentifierText.controlCharacterError)]))
            }
        }
        // Printable text of any script is an identifier.
        var fine = Self.started(id: "fine")
        fine["attributes_type"] = "Zürich–Ride 🚗"
        #expect(try server.post(events: [.object(fine)]).status == 200)

        try server.restart()
        let metrics = try server.get("/metrics")
        #expect(metrics.status == 200)
        let (status, output) = try Promtool.checkMetrics(metrics.text)
        #expect(status == 0, "\(output)")
        #expect(metrics.text.contains("liveactivity_activities_started_total{attributes_type=\"Zürich–Ride 🚗\",source=\"app\"} 1\n"))
        #expect(metrics.text.contains("liveactivity_unrenderable_series 0\n"))
    }

    /// A file written before migration 7 holds keys joined by U+001F, the attack's among them:
    /// starting on it repairs them, and the exposition is what it was plus the attack's counts
    /// under `other`.
    @Test func aFileWithFirstFormKeysIsRepairedAtStart() throws {
        let directory = TestServer.makeTemporaryDirectory()
        var server = try TestServer(directory: directory)
        #expect(try server.post(events: [.object(Self.started(id: "s1")), .object(Self.push(id: "p1"))]).status == 200)
        let before = try server.get("/metrics").text
        server.stop(keepFiles: true)

        let db = try Database(path: directory + "/monitor.sqlite")
        #expect(try db.userVersion == Schema.migrations.count)
        let started = MonitorMetrics.started.name
        do {
            for row in try db.query("SELECT key FROM counters") {
                let key = try #require(SeriesKey(storageKey: row[0].textValue ?? ""))
                try db.run("UPDATE counters SET key = ? WHERE key = ?",
                           [.text(([key.family] + key.labelValues).joined(separator: "\u{1F}")), row[0]])
            }
            for key in ["\(started)\u{1F}A\u{1F}app\u{1F}app", "\(started)\u{1F}\u{1F}push_to_start\u{1F}app", "garbage"] {
                try db.run("INSERT INTO counters (key, value) VALUES (?, 1)", [.text(key)])
            }
        }
        // A file that old has none of the later migrations' tables and columns either.
        try EventFilingTests.rewindToBeforeNumbering(db)
        try db.execute("""
            DROP TRIGGER event_verdicts_follow_deletes; DROP TABLE event_verdicts; DROP TABLE content_shapes;
            ALTER TABLE activities DROP COLUMN delivery;
            DROP TABLE pending_start_pushes; DROP TABLE push_to_start_tokens;
            DROP TABLE superseded_push_to_start_tokens; DROP TABLE start_push_verdicts;
            DROP TRIGGER start_push_verdicts_follow_deletes;
            ALTER TABLE activities DROP COLUMN undecodable_at; ALTER TABLE activities DROP COLUMN undecodable_detail;
            DROP TRIGGER unstarted_start_pushes_follow_deletes; DROP TABLE unstarted_start_pushes;
            ALTER TABLE activities DROP COLUMN start_date;
            ALTER TABLE activities DROP COLUMN channel_id;
            DROP TRIGGER broadcast_receivers_follow_deletes; DROP TABLE broadcast_receivers;
            DROP TABLE channels; DROP TRIGGER channel_events_follow_deletes; DROP TABLE channel_events;
            ALTER TABLE activities DROP COLUMN held_record;
            """)
        try db.setUserVersion(6)

        server = try TestServer(directory: directory)
        defer { server.stop() }
        let after = try server.get("/metrics").text
        let (status, output) = try Promtool.checkMetrics(after)
        #expect(status == 0, "\(output)")
        func samples(_ text: String) -> Set<Substring> {
            Set(text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("process_")
                && !$0.hasPrefix("liveactivity_store_size_bytes") && !$0.hasPrefix("liveactivity_http_requests_total")
                && !$0.hasPrefix("liveactivity_store_commit_seconds") })
        }
        let added = samples(after).subtracting(samples(before)), lost = samples(before).subtracting(samples(after))
        #expect(added == [
            "liveactivity_activities_started_total{attributes_type=\"(other)\",source=\"app\"} 2",
            "liveactivity_unrenderable_series 1",
        ], "\(added)")
        #expect(lost == ["liveactivity_unrenderable_series 0"], "\(lost)")
        let keys = try Database(path: directory + "/monitor.sqlite").query("SELECT key FROM counters").compactMap { $0[0].textValue }
        #expect(keys.allSatisfy { SeriesKey(storageKey: $0) != nil }, "\(keys)")
    }

    static func started(id: String) -> JSONObject {
        ["id": .string(id), "type": "activity.started", "activity_id": .string("A-" + id), "booking_id": "BK-1",
         "attributes_type": "TimerWidgetAttributes", "occurred_at": .number(JSONNumber(TestServer.base)),
         "content_state": ["startedAt": 1]]
    }

    static func push(id: String) -> JSONObject {
        ["id": .string(id), "type": "push.sent", "activity_id": "A-s1", "event": "update", "status": 200,
         "latency_ms": 12, "push_token": "0123456789abcdef0123456789abcdef",
         "occurred_at": .number(JSONNumber(TestServer.base + 1)), "content_state": ["startedAt": 2]]
    }
}
