import Foundation
import JSON
import PostgresDB
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// `migrate --from FILE --to postgres://…` with the real binary: a server on SQLite fed the demo
/// scenario, stopped, migrated to a database of the private cluster and started on it answers
/// `/metrics` and the read API exactly as before; and what it refuses.
@Suite struct MigrateTests {
    /// The demo's timers, rides and match (channels, broadcasts, push-to-start, faults) for
    /// 15 minutes in 5 s slices on the server's clock, one request per slice; a slice posted
    /// twice (duplicates), the scenario of `/metrics`' golden file, and a refused request.
    static func feed(_ server: TestServer) throws -> Double {
        var demo = DemoTrafficTests.scenario(rate: 40)
        var t = TestServer.base
        var slices = 0
        while t < TestServer.base + 900 {
            t += 5
            server.time.set(t)
            let events = demo.events(until: t).map(JSONValue.object)
            guard !events.isEmpty else { continue }
            #expect(try server.post(events: events).status == 200)
            slices += 1
            if slices == 10 { #expect(try server.post(events: events).status == 200) }
        }
        #expect(try server.post(events: Scenario.events).status == 200)
        #expect(try server.post("{not json").status == 400)
        return t
    }

    /// What must read the same after the move: the domain metrics and the read API.
    static func answers(_ server: TestServer) throws -> [String: String] {
        var out = ["/metrics": MetricsText.dataOnly(try server.get("/metrics").text, keepHTTP: false)]
        var paths = ["/api/activities?limit=1000", "/api/activities?state=dismissed&limit=1000", "/api/channels",
                     "/api/bookings/BK-1042", "/api/triage"]
        let live = try server.json("/api/activities?limit=1000")["activities"]?.arrayValue ?? []
        let dismissed = try server.json("/api/activities?state=dismissed&limit=1000")["activities"]?.arrayValue ?? []
        for activity in live.prefix(3) + dismissed.prefix(3) {
            if let booking = activity["booking_id"]?.stringValue { paths.append("/api/bookings/\(booking)") }
            if let id = activity["activity_id"]?.stringValue { paths.append("/api/activities/\(id)") }
        }
        let channels = try server.json("/api/channels")["channels"]?.arrayValue ?? []
        for channel in channels.prefix(2) {
            if let id = channel["channel_id"]?.stringValue?.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
                paths.append("/api/channels/\(id)")
            }
        }
        for path in paths {
            let response = try server.get(path)
            #expect(response.status == 200, "\(path): \(response.text)")
            out[path] = response.text
        }
        #expect(live.count > 5 && dismissed.count > 5 && !channels.isEmpty, "a varied fleet to compare")
        return out
    }

    @Test func aMigratedMonitorAnswersAsBefore() throws {
        let uri = try PostgresCluster.database()
        let sqlite = try TestServer()
        let now = try Self.feed(sqlite)
        let before = try Self.answers(sqlite)
        let path = sqlite.configuration.databasePath
        sqlite.stop(keepFiles: true)
        let events = try Database(path: path).scalar("SELECT count(*) FROM events")?.int64Value ?? 0

        let run = try CommandLineTests.run(["migrate", "--from", path, "--to", uri])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("verified"), "\(run.stdout)")
        let eventsLine = run.stdout.split(separator: "\n").first { $0.hasPrefix("events ") }.map(String.init) ?? ""
        #expect(eventsLine.split(separator: " ") == ["events", "\(events)", "\(events)"], "\(run.stdout)")
        #expect(events > 1000)

        let postgres = try TestServer(now: now, directory: sqlite.directory) { $0.databasePath = uri }
        defer { postgres.stop() }
        let after = try Self.answers(postgres)
        for (path, answer) in before {
            #expect(after[path] == answer, "\(path) differs after the move")
        }
        // Keys came along (a repeat is a duplicate) and new events number on.
        #expect(try postgres.post(events: Scenario.events).text == #"{"accepted":0,"duplicates":16}"#)
        guard case .object(var fresh)? = Scenario.events.first(where: { $0["id"] != nil }) else { throw TestFailure("no keyed event") }
        fresh["id"] = .string("after-the-move")
        let posted = try postgres.post(events: [.object(fresh)])
        #expect(posted.text == #"{"accepted":1,"duplicates":0}"#, "\(posted.text)")
        let db = try PostgresConnection(uri: uri)
        let seq = try db.query("SELECT max(seq) FROM events").rows.first?.first?.int64Value ?? 0
        #expect(seq > events)
    }

    /// A verdict written before verdicts escaped control characters (06afffe) named a content key
    /// with its raw U+0000, which PostgreSQL's text cannot hold: `migrate` failed after copying
    /// the events. It writes the detail as today's store would (the key by its escape).
    @Test func aVerdictWithARawControlCharacterMovesEscaped() throws {
        let uri = try PostgresCluster.database()
        let sqlite = try TestServer()
        #expect(try sqlite.post(events: [ContentShapeTests.start("nul-1", type: "NulKeyAttributes",
                                                                  content: ["a\u{0}b": "x", "q": 1])]).status == 200)
        #expect(try sqlite.post(events: [ContentShapeTests.push("nul-1", "nul-push", at: ContentShapeTests.t0 - 60, ["q": 1])]).status == 200)
        let path = sqlite.configuration.databasePath
        sqlite.stop(keepFiles: true)
        defer { try? FileManager.default.removeItem(atPath: sqlite.directory) }
        do {
            let db = try Database(path: path)
            try db.run("UPDATE event_verdicts SET detail = ?", [.text("`a\u{0}b` missing")])
        }

        let run = try CommandLineTests.run(["migrate", "--from", path, "--to", uri])
        #expect(run.status == 0, "\(run.stderr)")
        let detail = try PostgresConnection(uri: uri).query("SELECT detail FROM event_verdicts").rows.first?.first?.textValue
        #expect(detail == "`a\\u0000b` missing")
    }

    /// A broadcast's verdicts per attributes type (`broadcast_verdicts`) move with it: the
    /// PostgreSQL store's replays say what SQLite's did (undecodable for one type, applied to the other).
    @Test func aBroadcastsVerdictsMove() throws {
        typealias V = BroadcastVerdictTests
        let uri = try PostgresCluster.database()
        let sqlite = try TestServer()
        #expect(try sqlite.post(events: [V.subscriber("a", type: V.steps, content: ["step": 1]),
                                         V.subscriber("b", type: V.labels, content: ["nope": 1])]).status == 200)
        #expect(try sqlite.post(events: [V.broadcast(at: V.t0 - 300, content: ["nope": 2])]).status == 200)
        let path = sqlite.configuration.databasePath
        sqlite.stop(keepFiles: true)

        let run = try CommandLineTests.run(["migrate", "--from", path, "--to", uri])
        #expect(run.status == 0, "\(run.stderr)")
        let counted = run.stdout.split(separator: "\n").first { $0.hasPrefix("broadcast_verdicts ") }
        #expect(counted?.split(separator: " ") == ["broadcast_verdicts", "1", "1"], "\(run.stdout)")
        let postgres = try TestServer(directory: sqlite.directory) { $0.databasePath = uri }
        defer { postgres.stop() }
        try V.check(postgres, "a", effect: V.undecodable, content: ["step": 1])
        try V.check(postgres, "b", effect: V.applied, content: ["nope": 2])
    }

    @Test func refusesARunningServersFileAFileBehindItsEventsAndADatabaseInUse() throws {
        let server = try TestServer()
        #expect(try server.post(events: Scenario.events).status == 200)
        let path = server.configuration.databasePath
        let uri = try PostgresCluster.database()
        var run = try CommandLineTests.run(["migrate", "--from", path, "--to", uri])
        #expect(run.status == 1 && run.stderr.contains("in use by another live-activity-monitor process"), "\(run.stderr)")
        server.stop(keepFiles: true)
        defer { try? TemporaryDirectory.remove(server.directory) }

        // A file whose tables are behind its events (a crash) is refused; the database stays empty.
        let copy = server.directory + "/behind.sqlite"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try Database(path: copy).execute("UPDATE store_state SET applied_seq = 0")
        run = try CommandLineTests.run(["migrate", "--from", copy, "--to", uri])
        #expect(run.status == 1 && run.stderr.contains("not stopped cleanly"), "\(run.stderr)")

        run = try CommandLineTests.run(["migrate", "--from", path, "--to", uri])
        #expect(run.status == 0, "\(run.stderr)")
        run = try CommandLineTests.run(["migrate", "--from", path, "--to", uri])
        #expect(run.status == 1 && run.stderr.contains("is not empty"), "\(run.stderr)")
    }

    /// A server already leading on the empty database (started there first, to make it) has
    /// loaded empty tables: a copy beside it was verified, then the server's next commit wrote
    /// its own counters over the copied ones. Refused while it leads; once it stops, copied.
    @Test func refusesADatabaseAServerLeadsOn() throws {
        let server = try TestServer()
        #expect(try server.post(events: Scenario.events).status == 200)
        server.stop(keepFiles: true)
        defer { try? TemporaryDirectory.remove(server.directory) }
        let path = server.configuration.databasePath
        let uri = try PostgresCluster.database()
        let serve = try ServeProcess(["--db", uri])
        var run = try CommandLineTests.run(["migrate", "--from", path, "--to", uri])
        let stopped = serve.stop()
        #expect(run.status == 1 && run.stderr.contains("a live-activity-monitor server leads on \(uri) (it holds the leader lock); migrate copies"),
                "\(run.stdout)\(run.stderr)")
        #expect(try PostgresConnection(uri: uri).query("SELECT count(*) FROM events").rows.first?.first?.int64Value == 0)
        #expect(stopped.status == 0, "\(stopped.log)")
        run = try CommandLineTests.run(["migrate", "--from", path, "--to", uri])
        #expect(run.status == 0 && run.stdout.contains("verified"), "\(run.stderr)")
    }

    /// The password reaches libpq from `--db-password-file`; without it the role cannot log in.
    @Test func takesThePasswordFromItsFile() throws {
        let server = try TestServer()
        #expect(try server.post(events: Scenario.events).status == 200)
        server.stop(keepFiles: true)
        defer { try? TemporaryDirectory.remove(server.directory) }
        let uri = try PostgresCluster.passwordDatabase()
        let path = server.configuration.databasePath
        var run = try CommandLineTests.run(["migrate", "--from", path, "--to", uri], environment: ["PGPASSFILE": "/dev/null"])
        #expect(run.status == 1, "\(run.stdout)")
        let file = server.directory + "/password"
        try (PostgresCluster.password + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        run = try CommandLineTests.run(["migrate", "--from", path, "--to", uri, "--db-password-file", file])
        #expect(run.status == 0 && run.stdout.contains("verified"), "\(run.stderr)")
        #expect(run.stdout.contains("events ") && !run.stdout.contains(PostgresCluster.password))
    }

    @Test(arguments: [
        (["migrate", "--to", "postgres://x@/db"], "--from is required"),
        (["migrate", "--from", "/nonexistent/monitor.sqlite", "--to", "postgres://x@/db"], "no database at"),
        (["migrate", "--from", "a.sqlite", "--to", "b.sqlite"], "--to must be a PostgreSQL URI"),
        (["migrate", "--from", "a.sqlite", "--to", "postgres://x:secret@/db"], "must not hold a password"),
    ])
    func usageErrors(_ arguments: [String], _ message: String) throws {
        let r = try CommandLineTests.run(arguments)
        #expect(r.status == 2 && r.stderr.contains(message), "\(r.stderr)")
    }

    @Test func helpSaysWhatItCopiesAndHow() throws {
        let r = try CommandLineTests.run(["migrate", "--help"])
        #expect(r.status == 0)
        for text in ["--from", "--to", "--db-password-file", "empty", "counts"] { #expect(r.stdout.contains(text), "\(text)") }
        #expect(try CommandLineTests.run(["--help"]).stdout.contains("migrate"))
    }
}
