import Foundation
import JSON
import PostgresDB
import Testing
@testable import LiveActivityMonitor

/// `import`, `history` and `prune` with `--db postgres://…` (the real binary, a database of the
/// private cluster): the same file imported into SQLite and into PostgreSQL gives the same
/// `/metrics`, bookings and history; prune drops whole days and keeps the counters.
@Suite struct PostgresCommandLineTests {
    /// The golden scenario as an NDJSON file (its events occurred on 2026-11-18).
    static func scenarioFile(in directory: String) throws -> String {
        let path = directory + "/scenario.ndjson"
        try Scenario.events.map(\.jsonString).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Without the one thing two imports cannot share: the time each stored its events.
    static func withoutReceivedAt(_ text: String) -> String {
        text.replacingOccurrences(of: #""received_at":"[^"]*""#, with: #""received_at":"…""#, options: .regularExpression)
    }

    @Test func importAndHistoryOverPostgresAnswerAsOverSQLite() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? TemporaryDirectory.remove(directory) }
        let file = try Self.scenarioFile(in: directory)
        let sqlite = directory + "/monitor.sqlite"
        let uri = try PostgresCluster.database()
        for db in [sqlite, uri] {
            var run = try CommandLineTests.run(["import", "--db", db, file])
            #expect(run.status == 0 && run.stdout.contains("imported 16 events, 0 duplicates"), "\(db): \(run.stdout)\(run.stderr)")
            run = try CommandLineTests.run(["import", "--db", db, file])
            #expect(run.stdout.contains("imported 0 events, 16 duplicates"), "\(db): \(run.stdout)\(run.stderr)")
        }
        let fromFile = try CommandLineTests.run(["history", "--db", sqlite, "--format", "ndjson", "BK-1042"])
        let fromPostgres = try CommandLineTests.run(["history", "--db", uri, "--format", "ndjson", "BK-1042"])
        #expect(fromFile.status == 0 && fromPostgres.status == 0, "\(fromPostgres.stderr)")
        #expect(fromFile.stdout.count > 2000 && Self.withoutReceivedAt(fromPostgres.stdout) == Self.withoutReceivedAt(fromFile.stdout))
        let missing = try CommandLineTests.run(["history", "--db", uri, "BK-none"])
        #expect(missing.status == 1 && missing.stderr.contains("no booking"), "\(missing.stderr)")

        // Both stores, started at one instant, answer alike.
        let now = Date().timeIntervalSince1970
        var answers: [[String]] = []
        for db in [sqlite, uri] {
            let server = try TestServer(now: now, directory: directory) { $0.databasePath = db }
            answers.append([MetricsText.dataOnly(try server.get("/metrics").text, keepHTTP: false),
                            Self.withoutReceivedAt(try server.get("/api/bookings/BK-1042").text)])
            server.stop(keepFiles: true)
        }
        #expect(answers[0] == answers[1])
        #expect(MetricsText.value(of: "liveactivity_ingest_events_total{type=\"push.sent\"}", in: answers[1][0]) == 11)
    }

    @Test func pruneDropsWholeDaysAndKeepsTheCounters() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? TemporaryDirectory.remove(directory) }
        let uri = try PostgresCluster.database()
        #expect(try CommandLineTests.run(["import", "--db", uri, try Self.scenarioFile(in: directory)]).status == 0)
        let db = try PostgresConnection(uri: uri)
        let counters = try db.query("SELECT key, value FROM counters ORDER BY key").rows

        // The events occurred on TestServer.base's day: two days more than their age keeps them all.
        let age = Int((Date().timeIntervalSince1970 - TestServer.base) / 86_400) + 2
        var run = try CommandLineTests.run(["prune", "--db", uri, "--older-than", "\(age)d"])
        #expect(run.status == 0 && run.stdout.contains("pruned 0 events"), "\(run.stdout)\(run.stderr)")
        #expect(try db.query("SELECT count(*) FROM events").rows.first?.first?.int64Value == 16)
        run = try CommandLineTests.run(["prune", "--db", uri, "--older-than", "1s"])
        #expect(run.status == 0 && run.stdout.contains("pruned 16 events"), "\(run.stdout)\(run.stderr)")
        #expect(try db.query("SELECT count(*) FROM events").rows.first?.first?.int64Value == 0)
        #expect(try db.query("SELECT count(*) FROM event_keys").rows.first?.first?.int64Value == 0)
        #expect(try db.query("SELECT key, value FROM counters ORDER BY key").rows == counters)
    }

    /// As over SQLite (the file lock), `import` refuses a database a server leads on: the
    /// server's counters in memory would overwrite the import's. Once it stops, the import runs.
    @Test func importRefusesADatabaseAServerLeadsOn() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? TemporaryDirectory.remove(directory) }
        let file = try Self.scenarioFile(in: directory)
        let uri = try PostgresCluster.database()
        let server = try ServeProcess(["--db", uri])
        var run = try CommandLineTests.run(["import", "--db", uri, file])
        let stopped = server.stop()
        #expect(run.status == 1, "\(run.stdout)")
        #expect(run.stderr.contains("error: a live-activity-monitor server leads on \(uri) (it holds the leader lock); stop the servers"),
                "\(run.stderr)")
        #expect(try PostgresConnection(uri: uri).query("SELECT count(*) FROM events").rows.first?.first?.int64Value == 0)
        #expect(stopped.status == 0, "\(stopped.log)")
        run = try CommandLineTests.run(["import", "--db", uri, file])
        #expect(run.status == 0 && run.stdout.contains("imported 16 events, 0 duplicates"), "\(run.stdout)\(run.stderr)")
    }

    @Test func aDatabaseOfAnotherProgramIsRefused() throws {
        let uri = try PostgresCluster.database()
        for arguments in [["history", "--db", uri, "BK-1"], ["prune", "--db", uri, "--older-than", "30d"]] {
            let run = try CommandLineTests.run(arguments)
            // As for such an SQLite file: a failure (1), not a usage mistake (2) sent to `--help`.
            #expect(run.status == 1 && run.stderr.contains("not a live-activity-monitor database"), "\(arguments[0]): \(run.stderr)")
            #expect(!run.stderr.contains("--help"), "\(arguments[0]): \(run.stderr)")
        }
        // The database was only read: still no table of ours.
        #expect(try PostgresConnection(uri: uri).schemaVersion() == 0)

        // One of an older version: to be upgraded by `serve`, as an older SQLite file is.
        let older = try PostgresCluster.database()
        try PostgresConnection(uri: older).migrate(Array(PostgresSchema.migrations.dropLast()))
        for arguments in [["history", "--db", older, "BK-1"], ["prune", "--db", older, "--older-than", "30d"]] {
            let run = try CommandLineTests.run(arguments)
            #expect(run.status == 1 && run.stderr.contains("was written by an older version of live-activity-monitor; start `live-activity-monitor serve --db"),
                    "\(arguments[0]): \(run.stderr)")
        }
    }

    @Test(arguments: ["history", "import", "prune"])
    func helpNamesPostgres(_ command: String) throws {
        let run = try CommandLineTests.run([command, "--help"])
        #expect(run.status == 0 && run.stdout.contains("postgres://") && run.stdout.contains("--db-password-file"))
    }
}
