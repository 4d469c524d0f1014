import Foundation
import HTTPServer
import JSON
import PostgresDB
import Testing
@testable import LiveActivityMonitor

/// A standby serves the whole read API and the dashboard from the database (DESIGN.md section
/// 9): two real `serve` processes on one PostgreSQL database; once the standby's snapshot has
/// caught up, its lists, triage, channels and shapes answer as the leader's do, and it still
/// refuses events and exports no domain metric.
@Suite(.serialized) struct PostgresStandbyReadTests {
    typealias T = PostgresTakeoverTests
    static let json = [("Content-Type", "application/json")]
    static let channel = BroadcastTests.channel

    /// What the leader takes: a channel, two subscribers and one more activity, an update, a
    /// failed push, a broadcast, an end, and an activity ended and dismissed at once.
    static func events(at now: Double) -> [JSONValue] {
        let update = JSONValue(["type": "activity.updated", "activity_id": "sb-3", "occurred_at": now - 50,
                                "timestamp": now - 50, "content_state": ["startedAt": 7]] as [String: Any])
        let end = JSONValue(["type": "activity.ended", "activity_id": "sb-2", "occurred_at": now - 30] as [String: Any])
        let dismissed = JSONValue(["type": "activity.ended", "activity_id": "sb-4", "occurred_at": now - 20,
                                   "dismissal_policy": "immediate"] as [String: Any])
        return [
            ChannelTests.request("channel.created", channel, at: now - 70, status: 201, policy: 1),
            BroadcastTests.subscriber("sb-1", at: now - 60),
            BroadcastTests.subscriber("sb-2", at: now - 59),
            IngestTests.started("sb-3", at: now - 58),
            IngestTests.started("sb-4", at: now - 57),
            update,
            Scenario.push("sb-3", "sb-p1", at: now - 45, status: 410, reason: "Unregistered", token: IngestTests.token),
            BroadcastTests.broadcast(at: now - 40, content: 42),
            end,
            dismissed,
        ]
    }

    /// Read from both replicas, as the dashboard and a client read them.
    static let listPaths = ["/api/activities", "/api/activities?state=active", "/api/activities?state=ended",
                            "/api/activities?state=dismissed", "/api/activities?q=sb-", "/api/triage", "/api/channels",
                            "/api/channels/\(channel)", "/api/shapes"]

    @Test func aStandbyAnswersTheReadAPIAndTheDashboardFromTheDatabase() throws {
        let uri = try PostgresCluster.database()
        let leader = try ServeProcess(["--db", uri])
        let standby = try ServeProcess(["--db", uri])
        defer { _ = standby.stop(); _ = leader.stop() }
        #expect(try T.get(leader, "/-/ready").status == 200)
        let client = HTTPClient(port: leader.port)
        defer { client.close() }
        let posted = try client.request("POST", "/v1/events", headers: Self.json,
                                        body: Array(JSONValue.array(Self.events(at: Date().timeIntervalSince1970)).jsonString.utf8))
        #expect(posted.status == 200 && posted.text == #"{"accepted":10,"duplicates":0}"#, "\(posted.text)")

        // Not empty on the leader, so that equal answers mean something.
        let leaderList = try JSONParser.parse(try T.get(leader, "/api/activities").text)
        #expect(leaderList["activities"]?.arrayValue?.count == 3, "\(leaderList)")
        #expect(leaderList["counts"]?["ended"] == 1)

        try Self.expectSameAnswers(standby, leader)
        let dashboard = try T.get(standby, "/")
        #expect(dashboard.status == 200 && dashboard.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(dashboard.text.contains("<title>Live Activity Monitor</title>"))
        #expect(try T.get(standby, "/app.js").status == 200)
        for path in ["/api/activities/sb-1", "/api/bookings/BK-sb-3"] {
            let (read, fromLeader) = (try T.get(standby, path), try T.get(leader, path))
            #expect(read.status == 200 && read.text == fromLeader.text, "\(path): \(read.status) \(read.text)")
        }

        // Read again: what the leader takes later shows on the standby within seconds.
        let later = try client.request("POST", "/v1/events", headers: Self.json,
                                       body: Array(JSONValue.array([IngestTests.started("sb-5", at: Date().timeIntervalSince1970 - 5)]).jsonString.utf8))
        #expect(later.status == 200)
        try Self.expectSameAnswers(standby, leader)
        let standbyList = try JSONParser.parse(try T.get(standby, "/api/activities").text)
        #expect(standbyList["activities"]?.arrayValue?.count == 4, "\(standbyList)")

        // Still a standby: events refused, nothing stored; not ready; no domain metric.
        let refused = try HTTPClient(port: standby.port).request(
            "POST", "/v1/events", headers: Self.json,
            body: Array(JSONValue.array([IngestTests.started("sb-6", eventID: "e-sb-6")]).jsonString.utf8))
        #expect(refused.status == 503 && refused.headers["retry-after"] == "1", "\(refused.status) \(refused.text)")
        let db = try PostgresConnection(uri: uri)
        #expect(try db.query("SELECT count(*) FROM events WHERE event_id = $1", [.text("e-sb-6")]).scalar?.int64Value == 0)
        let ready = try T.get(standby, "/-/ready")
        #expect(ready.status == 503 && ready.headers["retry-after"] == "1")
        let metrics = try T.get(standby, "/metrics").text
        #expect(MetricsText.value(of: "liveactivity_leader", in: metrics) == 0)
        let families = Set(metrics.split(separator: "\n").filter { $0.hasPrefix("liveactivity_") }
            .map { String($0.prefix { $0 != "{" && $0 != " " }) })
        #expect(families == ["liveactivity_build_info", "liveactivity_leader"], "\(families)")
    }

    /// In process, on the leader's manual clock: the standby store's snapshot answers as the
    /// leader's memory does, is read again, and is kept while a read fails; writes are refused;
    /// stopping (a takeover) drops it.
    /// A snapshot that takes long to read is read less often: at most a third of the time.
    @Test func aSlowSnapshotIsReadLessOften() {
        #expect(PostgresStandbyStore.pause(after: 0.3, every: 2) == 2)
        #expect(PostgresStandbyStore.pause(after: 1, every: 2) == 2)
        #expect(PostgresStandbyStore.pause(after: 4.5, every: 2) == 9)
    }

    @Test func theSnapshotIsReadAgainAndKeptWhileAReadFails() throws {
        let leader = try PostgresInProcessMonitor()
        defer { leader.stop() }
        let m = TestedMonitor(leader)
        #expect(try m.post(events: Self.events(at: TestServer.base)).status == 200)
        let c = leader.configuration
        let log = Locked<[String]>([])
        let store = PostgresStandbyStore(uri: leader.uri, password: nil, clock: c.clock, settings: c.engine,
                                         reservedTypes: c.reservedTypes, declaredShapes: c.declaredShapes,
                                         refreshInterval: 0.05, log: { line in log.withLock { $0.append(line) } })
        defer { store.close() }
        let standby = buildMonitor(c, store: store)
        func get(_ path: String) -> HTTPResponse { standby.handle(InProcessMonitor.request("GET", path, headers: [], body: [])) }
        func expectSameAnswers(_ when: String) {
            for path in Self.listPaths {
                let (read, fromLeader) = (get(path), leader.handle("GET", path))
                #expect(read.status == 200 && read.body == fromLeader.body,
                        "\(when) \(path): \(read.status) \(String(decoding: read.body, as: UTF8.self))")
            }
        }
        #expect(!store.hasSnapshot)
        store.startRefreshing()
        try T.waitFor(seconds: 5) { store.hasSnapshot }
        expectSameAnswers("first snapshot")

        // A read that fails (a table gone) keeps the last snapshot, and says so in the log.
        let admin = try PostgresConnection(uri: leader.uri)
        try admin.execute("ALTER TABLE content_shapes RENAME TO content_shapes_away")
        try T.waitFor(seconds: 5) { log.value.contains { $0.contains("could not be read from the tables") } }
        #expect(store.hasSnapshot)
        expectSameAnswers("while reads fail")
        try admin.execute("ALTER TABLE content_shapes_away RENAME TO content_shapes")
        #expect(try m.post(events: [IngestTests.started("sb-5", at: TestServer.base - 5)]).status == 200)
        try T.waitFor(seconds: 5) { String(decoding: get("/api/activities").body, as: UTF8.self).contains("sb-5") }
        expectSameAnswers("read again")
        #expect(log.value.filter { $0.contains("state read from the tables") }.count == 2, "\(log.value)")

        // Writes are refused, nothing stored.
        let refused = standby.handle(InProcessMonitor.request(
            "POST", "/v1/events", headers: Self.json,
            body: Array(JSONValue.array([IngestTests.started("sb-6", eventID: "e-sb-6")]).jsonString.utf8)))
        #expect(refused.status == 503)
        #expect(try admin.query("SELECT count(*) FROM events WHERE event_id = $1", [.text("e-sb-6")]).scalar?.int64Value == 0)

        #expect(store.stopRefreshing())
        #expect(!store.hasSnapshot)
    }

    /// An answer's JSON without triage's `at` (the instant it was computed at, which differs
    /// between two requests).
    static func comparable(_ response: HTTPClient.Response) -> JSONValue? {
        guard case .object(var o)? = try? JSONParser.parse(response.text) else { return nil }
        _ = o.removeValue(forKey: "at")
        return .object(o)
    }

    /// Waits (up to 10 s: a snapshot is read every 2 s) for every read of `listPaths` to answer
    /// 200 on `standby` with the leader's very answer.
    static func expectSameAnswers(_ standby: ServeProcess, _ leader: ServeProcess) throws {
        var differing: [String] = []
        do {
            try T.waitFor(seconds: 10) {
                differing = try listPaths.filter { path in
                    let (read, fromLeader) = (try T.get(standby, path), try T.get(leader, path))
                    return read.status != 200 || fromLeader.status != 200 || comparable(read) != comparable(fromLeader)
                }
                return differing.isEmpty
            }
        } catch {
            for path in differing {
                let read = try T.get(standby, path), fromLeader = try T.get(leader, path)
                Issue.record("\(path): the standby answered \(read.status) \(read.text), the leader \(fromLeader.status) \(fromLeader.text)")
            }
        }
    }
}
