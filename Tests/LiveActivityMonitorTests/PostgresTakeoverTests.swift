import Dispatch
import Foundation
import HTTPServer
import JSON
import PostgresDB
import Synchronization
import Testing
@testable import LiveActivityMonitor

/// Two real `serve` processes on one PostgreSQL database (DESIGN.md section 9), four clients
/// posting events with ids through either one and going to the other on a 503 or a refused
/// connection: the leader killed (SIGKILL) or its lock session ended (`pg_terminate_backend`)
/// under load, the other takes over within 15 s, every acknowledged event is stored exactly
/// once, and the new leader's `/metrics` says what the tables hold.
@Suite(.serialized) struct PostgresTakeoverTests {
    /// A graceful stop gives the lock back before its session ends, so that a monitor restarted
    /// at once leads at once. Before, the lock went only when the server's backend noticed the
    /// session end, after `release` returned: a restart right then found it held now and then
    /// (in about one run of this test in three) and stood by (`/-/ready` 503, no list) until
    /// its next try a second later.
    @Test func aMonitorRestartedAtOnceLeadsAtOnce() throws {
        let uri = try PostgresCluster.database()
        let server = try TestServer { $0.databasePath = uri }
        defer { server.stop() }
        for round in 0..<60 {
            try server.restart()
            let ready = try server.get("/-/ready")
            #expect(ready.status == 200, "round \(round): \(ready.text)")
            if ready.status != 200 { break }
        }
    }

    @Test func aKilledLeaderIsReplacedWithinFifteenSecondsLosingNothing() throws {
        let uri = try PostgresCluster.database()
        let first = try ServeProcess(["--db", uri])
        let second = try ServeProcess(["--db", uri])
        defer { _ = second.stop() }
        // The first leads; the second is a standby that exports only what every replica does.
        #expect(try Self.get(first, "/-/ready").status == 200)
        let standby = try Self.get(second, "/-/ready")
        #expect(standby.status == 503 && standby.headers["retry-after"] == "1", "\(standby.text)")
        let standbyMetrics = try Self.get(second, "/metrics").text
        #expect(MetricsText.value(of: "liveactivity_leader", in: standbyMetrics) == 0)
        #expect(!standbyMetrics.contains("liveactivity_ingest_events_total"), "\(standbyMetrics)")
        #expect(MetricsText.value(of: "liveactivity_leader", in: try Self.get(first, "/metrics").text) == 1)

        let load = Load(ports: [first.port, second.port])
        load.start(clients: 4)
        try Self.waitFor(seconds: 10) { load.acknowledged.value.count >= 200 }
        // The standby reads one activity and one booking from the tables, as the leader answers
        // them (the lists, from its snapshot: `PostgresStandbyReadTests`).
        let id = load.acknowledged.value[0].ids[0]
        for path in ["/api/activities/\(id)", "/api/bookings/BK-\(id)", "/api/bookings/BK-\(id)?format=csv"] {
            let (read, fromLeader) = (try Self.get(second, path), try Self.get(first, path))
            #expect(read.status == 200 && read.text == fromLeader.text, "\(path): \(read.status) \(read.text)")
        }
        #expect(try Self.get(second, "/api/activities/nothing-\(id)").status == 404)
        let killed = DispatchTime.now()
        first.kill()
        try Self.waitFor(seconds: 15) { (try? Self.get(second, "/-/ready").status) == 200 }
        let takeover = Double(DispatchTime.now().uptimeNanoseconds - killed.uptimeNanoseconds) / 1e9
        #expect(takeover < 15, "took \(takeover) s")
        print("takeover after SIGKILL: the standby ready \(Int(takeover * 1000)) ms after the kill")
        let before = load.acknowledged.value.count
        try Self.waitFor(seconds: 10) { load.acknowledged.value.count >= before + 200 }
        load.stop()

        let acks = load.acknowledged.value
        #expect(acks.contains { $0.replica == 0 } && acks.contains { $0.replica == 1 })
        try Self.expectStoredExactlyOnce(acks.flatMap(\.ids), uri: uri)
        try Self.expectMetricsMatchTheTables(second, uri: uri)
    }

    @Test func aLeaderWhoseLockSessionIsCutStopsAcknowledgingBeforeTheOtherStarts() throws {
        let uri = try PostgresCluster.database()
        let first = try ServeProcess(["--db", uri])
        let second = try ServeProcess(["--db", uri])
        defer { _ = second.stop() }
        #expect(try Self.get(first, "/-/ready").status == 200)

        let load = Load(ports: [first.port, second.port])
        load.start(clients: 4)
        try Self.waitFor(seconds: 10) { load.acknowledged.value.count >= 200 }
        let admin = try PostgresConnection(uri: uri)
        let ended = try admin.query("""
            SELECT pg_terminate_backend(a.pid) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
            WHERE a.application_name = $1 AND a.datname = current_database() AND l.locktype = 'advisory' AND l.granted
            """, [.text(LeaderLock.applicationName)]).rows
        #expect(ended.count == 1, "lock sessions holding the lock: \(ended.count)")
        // It stops, and fails so that systemd would start it again (as a standby).
        let exit = first.waitForExit(seconds: 10)
        #expect(exit?.status == ServeCommand.deposedStatus, "\(exit?.log ?? "still running")")
        #expect(exit?.log.contains("no longer taking events") == true, "\(exit?.log ?? "")")
        try Self.waitFor(seconds: 15) { (try? Self.get(second, "/-/ready").status) == 200 }
        let before = load.acknowledged.value.count
        try Self.waitFor(seconds: 10) { load.acknowledged.value.count >= before + 200 }
        load.stop()

        let acks = load.acknowledged.value
        print("lock session cut: \(acks.filter { $0.replica == 0 }.count) requests acknowledged by the old leader, "
              + "\(acks.filter { $0.replica == 1 }.count) by the new one")
        let lastOfFirst = acks.filter { $0.replica == 0 }.map(\.at).max()
        let firstOfSecond = acks.filter { $0.replica == 1 }.map(\.at).min()
        #expect(lastOfFirst != nil && firstOfSecond != nil)
        if let lastOfFirst, let firstOfSecond {
            #expect(lastOfFirst < firstOfSecond, "the old leader acknowledged \(Double(lastOfFirst - firstOfSecond) / 1e6) ms after the new one began")
        }
        // Fencing, in the tables: whatever the old leader acknowledged was stored before
        // anything the new one acknowledged.
        let (oldSeqs, newSeqs) = try Self.seqs(acks, uri: uri)
        #expect(oldSeqs.max()! < newSeqs.min()!)
        try Self.expectStoredExactlyOnce(acks.flatMap(\.ids), uri: uri)
        try Self.expectMetricsMatchTheTables(second, uri: uri)
    }

    /// Fencing alone, without the lock: once another replica raised the epoch, the store that
    /// took the previous one commits nothing (503), and is not ready.
    @Test func aDeposedLeaderNeverCommitsAgain() throws {
        let uri = try PostgresCluster.database()
        let db = try PostgresStoreDatabase.open(uri: uri)
        let mine = try LeaderEpoch.take(db)
        let leader = try PostgresInProcessMonitor(uri: uri, epoch: mine)
        defer { leader.stop() }
        let m = TestedMonitor(leader)
        #expect(try m.post(events: [IngestTests.started("a", eventID: "e-a")]).status == 200)
        #expect(try LeaderEpoch.take(db) == mine + 1)
        let refused = try m.post(events: [IngestTests.started("b", eventID: "e-b")])
        #expect(refused.status == 503 && refused.text.contains("no longer the leader"), "\(refused.text)")
        #expect(try db.query("SELECT event_id FROM events").rows.map { $0[0].textValue } == ["e-a"])
        #expect(try m.get("/-/ready").status == 503)
    }

    // MARK: Checks

    static func expectStoredExactlyOnce(_ ids: [String], uri: String) throws {
        #expect(Set(ids).count == ids.count, "an event was acknowledged twice")
        let db = try PostgresConnection(uri: uri)
        let rows = try db.query("SELECT event_id, count(*) FROM events WHERE event_id = ANY($1::text[]) GROUP BY event_id",
                                [try .array(ids.map { .text($0) })]).rows
        #expect(rows.count == Set(ids).count, "acknowledged \(Set(ids).count), stored \(rows.count)")
        #expect(rows.allSatisfy { $0[1].int64Value == 1 })
        let total = try db.query("SELECT count(*), count(DISTINCT event_id) FROM events").rows[0]
        #expect(total[0].int64Value == total[1].int64Value)
    }

    /// The new leader's counters and gauges, rebuilt from the tables and moved since, against
    /// what the tables hold now.
    static func expectMetricsMatchTheTables(_ leader: ServeProcess, uri: String) throws {
        let db = try PostgresConnection(uri: uri)
        let events = try db.query("SELECT count(*) FROM events WHERE type = $1", [.text("activity.started")]).scalar?.int64Value
        let activities = try db.query("SELECT count(*) FROM activities").scalar?.int64Value
        let metrics = try get(leader, "/metrics").text
        #expect(MetricsText.value(of: "liveactivity_leader", in: metrics) == 1)
        #expect(MetricsText.value(of: #"liveactivity_ingest_events_total{type="activity.started"}"#, in: metrics).map(Int64.init) == events)
        #expect(MetricsText.value(of: #"liveactivity_activities{attributes_type="TimerWidgetAttributes",state="active"}"#, in: metrics)
                    .map(Int64.init) == activities)
        #expect(activities == events)
    }

    /// The stored order of what each replica acknowledged.
    static func seqs(_ acks: [Load.Ack], uri: String) throws -> (old: [Int64], new: [Int64]) {
        let db = try PostgresConnection(uri: uri)
        func seqs(_ replica: Int) throws -> [Int64] {
            let ids = acks.filter { $0.replica == replica }.flatMap(\.ids)
            return try db.query("SELECT seq FROM events WHERE event_id = ANY($1::text[])", [try .array(ids.map { .text($0) })])
                .rows.compactMap { $0[0].int64Value }
        }
        return (try seqs(0), try seqs(1))
    }

    static func get(_ server: ServeProcess, _ path: String) throws -> HTTPClient.Response {
        let client = HTTPClient(port: server.port, timeoutSeconds: 5)
        defer { client.close() }
        return try client.request("GET", path)
    }

    static func waitFor(seconds: Double, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while try !condition() {
            guard Date() < deadline else { throw TestFailure("not within \(seconds) s") }
            usleep(50_000)
        }
    }
}

/// Four clients posting five events with ids per request, each to one replica and to the other
/// after a 503 or a connection that fails, until the request is acknowledged (or the load stops).
final class Load: Sendable {
    struct Ack: Sendable {
        let replica: Int
        /// When the answer came (uptime nanoseconds).
        let at: UInt64
        let ids: [String]
    }

    let ports: [Int]
    let acknowledged = Locked<[Ack]>([])
    private let stopping = Atomic(false)
    private let finished = DispatchGroup()

    init(ports: [Int]) {
        self.ports = ports
    }

    func start(clients: Int) {
        for c in 0..<clients {
            finished.enter()
            Thread.detachNewThread { [self] in
                run(client: c)
                finished.leave()
            }
        }
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
    }

    private func run(client c: Int) {
        let clients = ports.map { HTTPClient(port: $0, timeoutSeconds: 5) }
        var target = c % ports.count
        var n = 0
        while !stopping.load(ordering: .relaxed) {
            let ids = (0..<5).map { "c\(c)-\(n)-\($0)" }
            n += 1
            let now = Date().timeIntervalSince1970
            let body = Array(JSONValue.array(ids.map { Self.started($0, at: now) }).jsonString.utf8)
            while !stopping.load(ordering: .relaxed) {
                if let response = try? clients[target].request("POST", "/v1/events", headers: [("Content-Type", "application/json")], body: body),
                   response.status == 200 {
                    let ack = Ack(replica: target, at: DispatchTime.now().uptimeNanoseconds, ids: ids)
                    acknowledged.withLock { $0.append(ack) }
                    break
                }
                clients[target].close()
                target = (target + 1) % ports.count
                usleep(20_000)
            }
        }
        for client in clients { client.close() }
    }

    static func started(_ id: String, at: Double) -> JSONValue {
        JSONValue([
            "type": "activity.started", "id": id, "activity_id": id, "booking_id": "BK-\(id)",
            "attributes_type": "TimerWidgetAttributes", "occurred_at": at,
            "content_state": ["startedAt": at], "push_token": String(repeating: "ab", count: 32),
        ] as [String: Any])
    }
}
