import Foundation
import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// The real binary over PostgreSQL: `serve --db postgres://…` (or `LAM_DB`) on a database of the
/// private test cluster, restarted on it; a password in the URI refused.
@Suite(.serialized) struct PostgresServeTests {
    static let json = [("Content-Type", "application/json")]

    @Test func serveStoresInPostgresAndRebuildsAfterARestart() throws {
        let uri = try PostgresCluster.database()
        let events = Array(JSONValue.array(Scenario.events).jsonString.utf8)
        let first = try ServeProcess(["--db", uri])
        let client = HTTPClient(port: first.port)
        let posted = try client.request("POST", "/v1/events", headers: Self.json, body: events)
        #expect(posted.status == 200 && posted.text == #"{"accepted":16,"duplicates":0}"#, "\(posted.text)")
        let booking = try client.request("GET", "/api/bookings/BK-1042").text
        let metrics = MetricsText.dataOnly(try client.request("GET", "/metrics").text, keepHTTP: false)
        #expect(try client.request("GET", "/-/ready").status == 200)
        client.close()
        let (status, log) = first.stop()
        #expect(status == 0)
        #expect(log.contains("database postgres://") && log.contains("durability synchronous_commit on"), "\(log)")

        // Named by the environment this time.
        let second = try ServeProcess([], environment: ["LAM_DB": uri])
        defer { _ = second.stop() }
        let again = HTTPClient(port: second.port)
        defer { again.close() }
        #expect(try again.request("GET", "/api/bookings/BK-1042").text == booking)
        #expect(MetricsText.dataOnly(try again.request("GET", "/metrics").text, keepHTTP: false) == metrics)
        #expect(try again.request("POST", "/v1/events", headers: Self.json, body: events).text
                == #"{"accepted":0,"duplicates":16}"#)
    }

    @Test func aPasswordInTheURIIsRefused() throws {
        let cluster = try PostgresCluster.shared()
        let uri = cluster.uri(database: "postgres").replacingOccurrences(of: "postgres@", with: "postgres:hunter2@")
        let (status, log) = try Self.serve(["--db", uri, "--port", "0"])
        #expect(status == 2, "\(log)")
        #expect(log.contains("--db-password-file"), "\(log)")
        let query = cluster.uri(database: "postgres") + "&password=hunter2"
        #expect(try Self.serve(["--db", query, "--port", "0"]).status == 2)
        // A password file is for PostgreSQL only.
        #expect(try Self.serve(["--db", "/tmp/x.sqlite", "--db-password-file", "/dev/null", "--port", "0"]).status == 2)
    }

    /// Runs the binary to its end (it must refuse before serving); its status and stderr.
    static func serve(_ arguments: [String]) throws -> (status: Int32, log: String) {
        try run(["serve"] + arguments)
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, log: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Repository.binary)
        process.arguments = arguments
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let log = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, log)
    }
}

extension PostgresServeTests {
    /// The password reaches libpq from its file, and is in neither the arguments nor the environment.
    @Test func thePasswordComesFromItsFileOnly() throws {
        let uri = try PostgresCluster.passwordDatabase()
        let directory = try TemporaryDirectory.make()
        defer { try? TemporaryDirectory.remove(directory) }
        try "\(PostgresCluster.password)\n".write(toFile: directory + "/pw", atomically: true, encoding: .utf8)
        #expect(try Self.serve(["--db", uri, "--port", "0"]).status == 1)
        let serve = try ServeProcess(["--db", uri], environment: ["LAM_DB_PASSWORD_FILE": directory + "/pw"])
        let pid = serve.process.processIdentifier
        for name in ["cmdline", "environ"] {
            let data = FileManager.default.contents(atPath: "/proc/\(pid)/\(name)") ?? Data()
            #expect(data.range(of: Data(PostgresCluster.password.utf8)) == nil, "the password is in /proc/\(pid)/\(name)")
        }
        let client = HTTPClient(port: serve.port)
        let posted = try client.request("POST", "/v1/events", headers: Self.json,
                                        body: Array(JSONValue.array(Scenario.events).jsonString.utf8))
        #expect(posted.text == #"{"accepted":16,"duplicates":0}"#)
        client.close()
        let (status, log) = serve.stop()
        #expect(status == 0)
        #expect(!log.contains(PostgresCluster.password))
    }
}
