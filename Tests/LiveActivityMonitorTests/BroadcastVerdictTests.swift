import Foundation
import JSON
import LiveActivityWire
import PostgresDB
import SQLiteDB
import Synchronization
import Testing
@testable import LiveActivityMonitor

/// A broadcast whose content a subscriber's attributes type would not decode (DESIGN.md section
/// 4, "Channels" and content shapes): the writer judges it per type of subscriber, and stores
/// what it judged (`broadcast_verdicts`), so that every replay (the timeline, `?at=`, the booking
/// and its files, `history`, a restart, the replay after a crash; a migrated store: MigrateTests)
/// says what the live record says: `undecodable_content`, the old content kept. Live: the real
/// server on both stores.
@Suite struct BroadcastVerdictTests {
    static let t0 = TestServer.base
    static let channel = "ch-verdicts"
    static let steps = "StepAttributes"
    static let labels = "LabelAttributes"
    static let missing = "`step` missing"

    /// An app start (which teaches its type's shape) subscribed to `channel`.
    static func subscriber(_ id: String, type: String, content: [String: Any], at: Double = t0 - 600) -> JSONValue {
        guard case .object(var o) = ContentShapeTests.start(id, type: type, content: content, at: at) else { return .null }
        o["channel_id"] = .string(channel)
        return .object(o)
    }

    /// A 200 broadcast to `channel` with `content`.
    static func broadcast(at: Double, content: [String: Any], id: String = "bc") -> JSONValue {
        guard case .object(var o) = BroadcastTests.broadcast(at: at, content: 0, channel: channel, id: id) else { return .null }
        o["content_state"] = JSONValue(content)
        return .object(o)
    }

    static func server(postgres: Bool, _ configure: (inout MonitorConfiguration) -> Void = { _ in }) throws -> TestServer {
        let uri = postgres ? try PostgresCluster.database() : nil
        return try TestServer { c in
            if let uri { c.databasePath = uri }
            configure(&c)
        }
    }

    /// The effect `[result, why, detail]` of the broadcast in an answer's events.
    static func broadcastEffect(_ answer: JSONValue) -> [String?]? {
        (answer["events"]?.arrayValue ?? []).first { $0["type"]?.stringValue == "push.sent" }.map { event in
            let effect = event["effect"]
            return [effect?["result"]?.stringValue, effect?["why"]?.stringValue, effect?["detail"]?.stringValue]
        }
    }

    static let undecodable: [String?] = ["no_effect", "undecodable_content", missing]
    static let applied: [String?] = ["applied", nil, nil]

    /// What every read says of subscriber `id` after the broadcast: its effect in the activity's
    /// and the booking's timeline and files, and the content it shows then (`?at=`) and now.
    static func check(_ server: TestServer, _ id: String, effect: [String?], content: JSONValue,
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        let live = try server.json("/api/activities/\(id)")
        #expect(live["content_state"] == content, "live", sourceLocation: sourceLocation)
        #expect(Self.broadcastEffect(live) == effect, "the activity's timeline: \(live)", sourceLocation: sourceLocation)
        let then = try server.json("/api/activities/\(id)?at=" + RFC3339.format(t0 - 200))
        #expect(then["content_state"] == content, "?at=: \(then)", sourceLocation: sourceLocation)
        #expect(Self.broadcastEffect(then) == effect, "?at=", sourceLocation: sourceLocation)
        let booking = try server.json("/api/bookings/BK-\(id)")
        #expect(Self.broadcastEffect(booking) == effect, "the booking's timeline: \(booking)", sourceLocation: sourceLocation)
        let file = try server.get("/api/bookings/BK-\(id)?format=ndjson")
        let lines = file.text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        let pushed = lines.first { $0["type"]?.stringValue == "push.sent" }
        #expect(pushed?["effect"]?["why"]?.stringValue == effect[1], "the booking's file: \(file.text)",
                sourceLocation: sourceLocation)
        if effect[1] != nil {
            #expect(live["undecodable"]?["detail"]?.stringValue == effect[2], "live", sourceLocation: sourceLocation)
        }
    }

    /// The defect's repro: the live record kept its content and says why, and so does every
    /// replay, before and after a restart.
    @Test(arguments: [false, true]) func anUndecodableBroadcastIsUndecodableInEveryReplay(postgres: Bool) throws {
        let server = try Self.server(postgres: postgres)
        defer { server.stop() }
        #expect(try server.post(events: [Self.subscriber("a", type: Self.steps, content: ["step": 1])]).status == 200)
        let posted = try server.post(events: [Self.broadcast(at: Self.t0 - 300, content: ["nope": 2])])
        #expect(posted.status == 200, "\(posted.text)")
        try Self.check(server, "a", effect: Self.undecodable, content: ["step": 1])
        try server.restart()
        try Self.check(server, "a", effect: Self.undecodable, content: ["step": 1])
        #expect(try server.json("/api/activities/a")["undecodable"]?["detail"]?.stringValue == Self.missing)
        // `history` reads the store as the read API does.
        let run = try CommandLineTests.run(["history", "--format", "ndjson", "--db", server.configuration.databasePath, "BK-a"])
        #expect(run.status == 0, "\(run.stderr)")
        let printed = run.stdout.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        let pushed = printed.first { $0["type"]?.stringValue == "push.sent" }
        #expect(pushed?["effect"]?["why"]?.stringValue == "undecodable_content", "\(run.stdout)")
        #expect(pushed?["effect"]?["detail"]?.stringValue == Self.missing, "\(run.stdout)")
    }

    /// Subscribers of two types on one channel: the same broadcast is undecodable for one type
    /// (each of its subscribers) and applied to the other, in every replay of each.
    @Test(arguments: [false, true]) func subscribersOfTwoTypesKeepTheirOwnVerdicts(postgres: Bool) throws {
        let server = try Self.server(postgres: postgres)
        defer { server.stop() }
        #expect(try server.post(events: [Self.subscriber("a", type: Self.steps, content: ["step": 1]),
                                         Self.subscriber("a2", type: Self.steps, content: ["step": 5]),
                                         Self.subscriber("b", type: Self.labels, content: ["nope": 1])]).status == 200)
        #expect(try server.post(events: [Self.broadcast(at: Self.t0 - 300, content: ["nope": 2])]).status == 200)
        for _ in 0..<2 {
            try Self.check(server, "a", effect: Self.undecodable, content: ["step": 1])
            try Self.check(server, "a2", effect: Self.undecodable, content: ["step": 5])
            try Self.check(server, "b", effect: Self.applied, content: ["nope": 2])
            #expect(try server.json("/api/activities/b")["undecodable"] == .null)
            try server.restart()
        }
    }

    /// After a crash the broadcast is applied again at start with its stored verdicts: each
    /// subscriber is what the server had, not the broadcast's content.
    @Test func aCrashReplaysABroadcastWithItsVerdicts() throws {
        let server = try TestServer { $0.catchUpInterval = 3600 }   // behind until told
        defer { server.stop() }
        #expect(try server.post(events: [Self.subscriber("a", type: Self.steps, content: ["step": 1]),
                                         Self.subscriber("b", type: Self.labels, content: ["nope": 1])]).status == 200)
        server.server.store.catchUp()
        #expect(try server.post(events: [Self.broadcast(at: Self.t0 - 300, content: ["nope": 2])]).status == 200)
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let expected = try ReplayTests.crashImage(of: server, to: directory + "/monitor.sqlite", ids: ["a", "b"])

        let logged = Mutex<[String]>([])
        let again = try TestServer(now: server.time.value, directory: directory) { c in
            c.log = { line in logged.withLock { $0.append(line) } }
        }
        defer { again.stop() }
        #expect(logged.withLock { $0 }.contains { $0.contains("replayed 1 events") }, "\(logged.withLock { $0 })")
        #expect(try ReplayTests.state(of: again.server.store, ids: ["a", "b"]).records == expected.records)
        try Self.check(again, "a", effect: Self.undecodable, content: ["step": 1])
        try Self.check(again, "b", effect: Self.applied, content: ["nope": 2])
    }

    /// The file as migration 17 left it: without `broadcast_verdicts` (what it held is lost, as
    /// an older server never stored it).
    static func rewindToBeforeBroadcastVerdicts(_ db: Database) throws {
        try db.execute("""
            DROP TRIGGER broadcast_verdicts_follow_deletes;
            DROP TABLE broadcast_verdicts;
            """)
        try db.setUserVersion(17)
    }

    /// An older file upgrades: a broadcast stored before has no verdicts, and its replays apply
    /// it as they did (the live record, from its row, is what the writer left); one stored after
    /// the upgrade has its own.
    @Test func aBroadcastStoredBeforeTheUpgradeReplaysAsItDid() throws {
        let first = try TestServer()
        #expect(try first.post(events: [Self.subscriber("a", type: Self.steps, content: ["step": 1])]).status == 200)
        #expect(try first.post(events: [Self.broadcast(at: Self.t0 - 300, content: ["nope": 2])]).status == 200)
        first.stop(keepFiles: true)
        try Self.rewindToBeforeBroadcastVerdicts(try Database(path: first.configuration.databasePath))
        let server = try TestServer(now: first.time.value, directory: first.directory)
        defer { server.stop() }
        #expect(try Database(path: server.configuration.databasePath, mode: .readOnly).userVersion == Schema.migrations.count)
        let live = try server.json("/api/activities/a")
        #expect(live["content_state"] == ["step": 1])
        #expect(Self.broadcastEffect(live) == Self.applied, "as before the upgrade")

        #expect(try server.post(events: [Self.subscriber("n", type: Self.steps, content: ["step": 1])]).status == 200)
        #expect(try server.post(events: [Self.broadcast(at: Self.t0 - 250, content: ["nope": 3], id: "bc-after")]).status == 200)
        try Self.check(server, "n", effect: Self.undecodable, content: ["step": 1])
    }

    /// Retention deletes a broadcast's verdicts with it: by event on SQLite (a trigger), by day
    /// on PostgreSQL.
    @Test(arguments: [false, true]) func retentionRemovesTheVerdictsWithTheBroadcast(postgres: Bool) throws {
        let server = try Self.server(postgres: postgres)
        defer { server.stop() }
        let old = RetentionTests.old
        // In one commit: a subscriber dismissed since long ago is no longer one.
        #expect(try server.post(events: [Self.subscriber("a", type: Self.steps, content: ["step": 1], at: old),
                                         Self.broadcast(at: old + 30, content: ["nope": 2], id: "old-bc")]).status == 200)
        #expect(try server.post(events: [Self.subscriber("n", type: Self.steps, content: ["step": 1])]).status == 200)
        #expect(try server.post(events: [Self.broadcast(at: Self.t0 - 300, content: ["nope": 3], id: "new-bc")]).status == 200)
        func verdicts() throws -> Int64? {
            if postgres {
                let db = try PostgresConnection(uri: server.configuration.databasePath)
                return try db.query("SELECT count(*) FROM broadcast_verdicts").rows.first?.first?.int64Value
            }
            return try Database(path: server.configuration.databasePath, mode: .readOnly)
                .scalar("SELECT count(*) FROM broadcast_verdicts")?.int64Value
        }
        if !postgres { server.server.store.catchUp() }
        #expect(try verdicts() == 2)
        if postgres {
            let db = try PostgresConnection(uri: server.configuration.databasePath)
            try PostgresEventPartitions.drop(before: PostgresEventPartitions.day(Self.t0 - 30 * RetentionTests.day), db)
        } else {
            #expect(try RetentionTests.retention(server).runOnce().events == 2)
        }
        #expect(try verdicts() == 1, "the old broadcast's went with it")
        try Self.check(server, "n", effect: Self.undecodable, content: ["step": 1])
    }
}
