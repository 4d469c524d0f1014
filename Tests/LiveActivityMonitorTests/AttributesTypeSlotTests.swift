import Foundation
import JSON
import PostgresDB
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// The 50 `attributes_type` label slots against a client that reports junk types: types with
/// a template or listed by the operator keep their series, through restarts; the rest go to
/// app-reported types and are given up when no live activity uses them.
@Suite struct AttributesTypeSlotTests {
    static func start(_ id: String, type: String, source: String = "app", at: Double = TestServer.base) -> JSONValue {
        .object(["type": "activity.started", "activity_id": .string(id), "booking_id": .string("BK-" + id),
                 "attributes_type": .string(type), "source": .string(source),
                 "occurred_at": .number(JSONNumber(at)), "content_state": ["x": 1]])
    }

    static func dismissed(_ id: String) -> JSONValue {
        .object(["type": "activity.dismissed", "activity_id": .string(id), "occurred_at": .number(JSONNumber(TestServer.base + 1))])
    }

    /// A series' value, its name matched by bytes (`hasPrefix` would match an equivalent spelling).
    static func exactValue(of series: String, in text: String) -> Double? {
        let prefix = Array((series + " ").utf8)
        for line in text.split(separator: "\n") where line.utf8.starts(with: prefix) {
            return Double(String(decoding: line.utf8.dropFirst(prefix.count), as: UTF8.self))
        }
        return nil
    }

    static func startedSeries(_ type: String, _ source: String = "app") -> String {
        "liveactivity_activities_started_total{attributes_type=\"\(type)\",source=\"\(source)\"}"
    }

    /// The attributes types `/metrics` shows in `activities_started_total`.
    static func startedTypes(_ server: TestServer) throws -> Set<String> {
        let text = try server.get("/metrics").text
        return Set(text.split(separator: "\n").filter { $0.hasPrefix("liveactivity_activities_started_total{") }.compactMap { line in
            line.split(separator: "\"", omittingEmptySubsequences: false).dropFirst().first.map(String.init)
        })
    }

    @Test func junkTypesCannotTakeTheSeriesOfTemplateOrListedTypes() throws {
        let server = try TestServer { $0.attributesTypes = ["CheckoutAttributes"] }
        defer { server.stop() }
        // Web/templates' types and CheckoutAttributes are reserved; the junk takes the free slots.
        let free = AttributesTypeLabels.limit - (TestServer.templateCount + 1)
        let junk = (0..<60).map { Self.start("junk-\($0)", type: "Junk\($0)") }
        #expect(try server.post(events: junk).status == 200)
        let real = [Self.start("t1", type: "TimerWidgetAttributes"), Self.start("c1", type: "CheckoutAttributes"),
                    Self.start("r1", type: "LiveActivityAttributes", source: "push_to_start")]
        #expect(try server.post(events: real).status == 200)
        for _ in 0..<2 {
            #expect(try server.metric(Self.startedSeries("TimerWidgetAttributes")) == 1)
            #expect(try server.metric(Self.startedSeries("CheckoutAttributes")) == 1)
            #expect(try server.metric(Self.startedSeries("LiveActivityAttributes", "push_to_start")) == 1)
            #expect(try server.metric(Self.startedSeries(AttributesTypeLabels.other)) == Double(60 - free))
            let types = try Self.startedTypes(server)
            #expect(types.count == AttributesTypeLabels.limit + 1, "\(types.sorted())")
            #expect(try server.metric("liveactivity_activities{attributes_type=\"TimerWidgetAttributes\",state=\"active\"}") == 1)
            try server.restart()
        }
    }

    @Test func aRealTypeNamedOtherAndEquivalentSpellingsKeepTheirOwnSeries() throws {
        let server = try TestServer()
        defer { server.stop() }
        let composed = "Caf\u{E9}Attributes", decomposed = "Cafe\u{301}Attributes"
        #expect(composed == decomposed)   // to Swift; not to Prometheus
        let events = [Self.start("o1", type: "other"), Self.start("e1", type: composed), Self.start("e2", type: decomposed),
                      Self.start("e3", type: decomposed), Self.start("x1", type: AttributesTypeLabels.other)]
        #expect(try server.post(events: events).status == 200)
        for _ in 0..<2 {
            let text = try server.get("/metrics").text
            let (status, output) = try Promtool.checkMetrics(text)
            #expect(status == 0, "\(output)")
            #expect(Self.exactValue(of: Self.startedSeries("other"), in: text) == 1)
            #expect(Self.exactValue(of: Self.startedSeries(AttributesTypeLabels.other), in: text) == 1)
            #expect(Self.exactValue(of: Self.startedSeries(composed), in: text) == 1)
            #expect(Self.exactValue(of: Self.startedSeries(decomposed), in: text) == 2)
            #expect(Self.exactValue(of: "liveactivity_activities{attributes_type=\"\(decomposed)\",state=\"active\"}", in: text) == 2)
            try server.restart()
        }
    }

    @Test func slotsOfTypesNoLiveActivityUsesGoToTypesThatWaited() throws {
        let server = try TestServer()
        defer { server.stop() }
        let free = AttributesTypeLabels.limit - TestServer.templateCount
        // Junk types fill the free slots; their activities are dismissed a second later.
        let junk = (0..<free).map { Self.start("junk-\($0)", type: "Junk\($0)") }
        #expect(try server.post(events: junk).status == 200)
        #expect(try server.post(events: (0..<free).map { Self.dismissed("junk-\($0)") }).status == 200)
        server.time.advance(by: 2)
        // A live one keeps its type's slot.
        #expect(try server.post(events: [Self.start("live-1", type: "Junk0")]).status == 200)
        // A real app's type finds no slot: this start is the overflow's, and the type waits;
        // after the commit it takes the slot of a junk type that no live activity uses.
        #expect(try server.post(events: [Self.start("ride-1", type: "RideAttributes")]).status == 200)
        #expect(try server.metric(Self.startedSeries(AttributesTypeLabels.other)) == 1)
        #expect(try server.metric(Self.startedSeries("RideAttributes")) == 0)
        #expect(try server.post(events: [Self.start("ride-2", type: "RideAttributes")]).status == 200)
        #expect(try server.metric(Self.startedSeries("RideAttributes")) == 1)
        #expect(try server.metric("liveactivity_activities{attributes_type=\"RideAttributes\",state=\"active\"}") == 2)
        // Push-to-start types never take a slot.
        #expect(try server.post(events: [Self.start("p-1", type: "PushOnlyAttributes", source: "push_to_start")]).status == 200)
        #expect(try server.metric(Self.startedSeries(AttributesTypeLabels.other, "push_to_start")) == 1)
        // Slots are given at most once a minute (it walks the live activities).
        #expect(try server.post(events: [Self.start("taxi-1", type: "TaxiAttributes")]).status == 200)
        #expect(try server.post(events: [Self.start("taxi-2", type: "TaxiAttributes")]).status == 200)
        #expect(try server.metric(Self.startedSeries("TaxiAttributes")) == nil)
        server.time.advance(by: 60)
        #expect(try server.post(events: [Self.start("taxi-3", type: "TaxiAttributes")]).status == 200)
        #expect(try server.post(events: [Self.start("taxi-4", type: "TaxiAttributes")]).status == 200)
        #expect(try server.metric(Self.startedSeries("TaxiAttributes")) == 1)
        #expect(try server.metric(Self.startedSeries(AttributesTypeLabels.other)) == 4)
        // The live junk type kept its slot; the two that gave theirs up (first in byte order)
        // lost their series, and stay without them after a restart.
        for _ in 0..<2 {
            let types = try Self.startedTypes(server)
            #expect(types.isSuperset(of: ["RideAttributes", "TaxiAttributes", "Junk0", "Junk2"]))
            #expect(types.isDisjoint(with: ["Junk1", "Junk10"]))
            #expect(types.count <= AttributesTypeLabels.limit + 1)
            #expect(try server.metric("liveactivity_activities{attributes_type=\"Junk0\",state=\"active\"}") == 1)
            try server.restart()
        }
    }

    /// Every label value an `attributes_type` series carries, over the whole exposition.
    static func allTypes(_ text: String) -> Set<String> {
        Set(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line -> String? in
            guard let range = line.range(of: "attributes_type=\"") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        })
    }

    /// How many series of types named `prefix…` the `counters` table holds, in SQLite or PostgreSQL.
    static func storedSeries(_ server: TestServer, prefix: String) throws -> Int {
        let path = server.configuration.databasePath, needle = "\"" + prefix
        if path.hasPrefix("postgres") {
            let db = try PostgresConnection(uri: path)
            return Int(try db.query("SELECT count(*) FROM counters WHERE strpos(key, $1) > 0", [.text(needle)]).rows[0][0].int64Value ?? -1)
        }
        let db = try Database(path: path, mode: .readOnly)
        return Int(try db.query("SELECT count(*) FROM counters WHERE instr(key, ?) > 0", [.text(needle)])[0][0].int64Value ?? -1)
    }

    /// A client that reports a hundred new types a minute, each dismissed at once: each minute
    /// they take the free slots from the last minute's, which must take their series with them,
    /// or the label grows by a slot's worth of series every minute, for good.
    @Test(arguments: [false, true]) func typesThatLoseTheirSlotTakeTheirSeriesWithThem(postgres: Bool) throws {
        let uri = postgres ? try PostgresCluster.database() : nil
        let server = try TestServer { c in if let uri { c.databasePath = uri } }
        defer { server.stop() }
        let free = AttributesTypeLabels.limit - TestServer.templateCount
        for round in 0..<5 {
            let ids = (0..<100).map { "churn-\(round)-\($0)" }
            #expect(try server.post(events: ids.map { Self.start($0, type: "Churn" + $0.dropFirst(6)) }).status == 200)
            #expect(try server.post(events: ids.map(Self.dismissed)).status == 200)
            server.time.advance(by: 61)
            // The types that waited, started again: each minute a new set takes the slots.
            #expect(try server.post(events: ids.map { Self.start($0 + "-again", type: "Churn" + $0.dropFirst(6)) }).status == 200)
            #expect(try server.post(events: ids.map { Self.dismissed($0 + "-again") }).status == 200)
        }
        for _ in 0..<2 {
            let types = Self.allTypes(try server.get("/metrics").text)
            #expect(types.count <= AttributesTypeLabels.limit + 1, "\(types.count) attributes_type values")
            #expect(types.filter { $0.hasPrefix("Churn") }.count <= free)
            // Rows of ended series are deleted (by the commits, the last at the stop), not only
            // left out of the exposition.
            try server.restart()
            #expect(try Self.storedSeries(server, prefix: "Churn") <= free * 3)
        }
    }

    /// A database written before series ended with their slot holds the series of every type
    /// that ever had one: start-up keeps those of the types it gives a slot, and deletes the rest.
    @Test func startUpEndsTheSeriesOfTypesWithoutASlot() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.start("a-1", type: "LiveType")]).status == 200)
        server.stop(keepFiles: true)
        let db = try Database(path: server.configuration.databasePath)
        for i in 0..<200 {
            let key = SeriesKey(MonitorMetrics.started.name, ["OldType\(i)", "app"]).storageKey
            try db.run("INSERT INTO counters (key, value) VALUES (?, ?)", [.text(key), .real(Double(i + 1))])
        }
        let again = try TestServer(directory: server.directory)
        defer { again.stop() }
        let free = AttributesTypeLabels.limit - TestServer.templateCount
        let types = Self.allTypes(try again.get("/metrics").text)
        #expect(types.count == AttributesTypeLabels.limit, "\(types.count) attributes_type values")
        // The live type first, then the most started.
        #expect(types.contains("LiveType") && types.contains("OldType199") && !types.contains("OldType0"))
        try again.restart()
        #expect(try Self.storedSeries(again, prefix: "OldType") == free - 1)
        #expect(Self.allTypes(try again.get("/metrics").text) == types)
    }
}
