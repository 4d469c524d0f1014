import Dispatch
import Foundation
import HTTPServer
import LiveActivityWire
import SQLiteDB
import JSON

/// `serve`: run the server until SIGTERM or SIGINT, then stop in order and exit 0.
enum ServeCommand {
    static let parser = ArgumentParser(
        command: "serve",
        usage: "serve [options]",
        summary: """
            Runs the server: POST /v1/events, GET /metrics, /api/*, /-/healthy, /-/ready and the
            dashboard from the web root. With no options it listens on 127.0.0.1:\(MonitorConfiguration.defaultPort) and keeps
            its data in ./live-activities.sqlite. Tokens are read from files, never from arguments.
            """,
        options: [
            .init(name: "port", environment: "LAM_PORT", valueName: "N",
                  help: "TCP port (default \(MonitorConfiguration.defaultPort); 0 picks a free one and logs it)."),
            .init(name: "host", environment: "LAM_HOST", valueName: "ADDR",
                  help: "Address to bind (default 127.0.0.1; 0.0.0.0 or :: for all)."),
            CommandLineTool.dbOption,
            CommandLineTool.dbPasswordFileOption,
            .init(name: "web-root", environment: "LAM_WEB_ROOT", valueName: "DIR", help: "Dashboard files (default ./Web)."),
            .init(name: "ingest-token-file", environment: "LAM_INGEST_TOKEN_FILE", valueName: "F",
                  help: "File holding the bearer token POST /v1/events requires."),
            .init(name: "read-token-file", environment: "LAM_READ_TOKEN_FILE", valueName: "F",
                  help: "File holding the bearer token /api/* requires."),
            .init(name: "durability", environment: "LAM_DURABILITY", valueName: "normal|full",
                  help: "normal: a commit survives a process crash; full: fsync each commit, survives power loss (default normal)."),
            .init(name: "retention", environment: "LAM_RETENTION", valueName: "AGE",
                  help: "Delete events older than AGE (30d, 12h, 90m, 45s) every hour, the first pass a minute after start, as prune does; counters are kept (default off; off turns it off)."),
            .init(name: "attributes-types", environment: "LAM_ATTRIBUTES_TYPES", valueName: "A,B,…",
                  help: "Attributes types that always get their own attributes_type series, besides those with a template in the web root (comma-separated)."),
        ] + EngineOptions.options + [
            .init(name: "max-body-bytes", environment: "LAM_MAX_BODY_BYTES", valueName: "N",
                  help: "Largest request body accepted, in bytes: 1024 to 67108864 = 64 MiB (default 1048576 = 1 MiB)."),
            .init(name: "max-live-activities", environment: "LAM_MAX_LIVE_ACTIVITIES", valueName: "N",
                  help: "Live activities kept in memory, 1000 to 100000000; beyond it the oldest-started leave memory (still stored, missing from gauges and the wall) (default 2000000)."),
            .init(name: "max-inflight-bytes", environment: "LAM_MAX_INFLIGHT_BYTES", valueName: "N",
                  help: "Bytes all requests may hold at once (their bodies, their events' parsed contents, and answers of 256 KiB or more until sent); beyond it a request gets 503 and Retry-After, 0 for no limit (default 67108864 = 64 MiB)."),
            .init(name: "max-connections", environment: "LAM_MAX_CONNECTIONS", valueName: "N",
                  help: "Concurrent connections accepted, 1 to 100000 (default 8192); the open-files limit is raised to fit, within its hard limit."),
            .init(name: "http-threads", environment: "LAM_HTTP_THREADS", valueName: "N",
                  help: "HTTP polling threads (event-driven, epoll), 1 to 256 (default: one per processor)."),
            .init(name: "max-connections-per-address", environment: "LAM_MAX_CONNECTIONS_PER_ADDRESS", valueName: "N",
                  help: "Connections one client address may hold at once, 0 to 10000 (default 0 = no limit)."),
            .init(name: "connection-timeout", environment: "LAM_CONNECTION_TIMEOUT", valueName: "SECONDS",
                  help: "Seconds after which idle or slow connections are closed, 1 to 3600 (default 30)."),
            .init(name: "demo", environment: "LAM_DEMO", valueName: nil,
                  help: "Also generate realistic demo traffic (timers, rides and a match on a broadcast channel, with faults) through the ingest path."),
            .init(name: "demo-rate", environment: "LAM_DEMO_RATE", valueName: "N",
                  help: "Demo activities started per minute, above 0 and at most 100000 (default 20)."),
        ])

    static func configuration(_ parsed: ArgumentParser.Parsed) throws -> MonitorConfiguration {
        var c = MonitorConfiguration()
        c.port = try CommandLineTool.integer(parsed, "port", range: 0...65535) ?? c.port
        if let host = parsed.values["host"] {
            // Checked here, as the HTTP layer would, so that a bad value is a usage error naming its source.
            guard HTTPServer.Configuration.isAddress(host) else {
                throw UsageError("\(parsed.source("host")) must be an IPv4 or IPv6 address such as 127.0.0.1, 0.0.0.0, ::1 or ::, not '\(host)'")
            }
            c.host = host
        }
        c.databasePath = try CommandLineTool.database(parsed)
        c.webRoot = parsed.values["web-root"] ?? c.webRoot
        c.ingestToken = try CommandLineTool.readToken(parsed, "ingest-token-file") ?? c.ingestToken
        c.readToken = try CommandLineTool.readToken(parsed, "read-token-file") ?? c.readToken
        if let ingest = c.ingestToken, let read = c.readToken, ingest == read {
            throw UsageError("the ingest and read tokens must differ")
        }
        if let d = parsed.values["durability"] {
            guard let durability = Durability(rawValue: d) else { throw UsageError("\(parsed.source("durability")) must be normal or full, not '\(d)'") }
            c.durability = durability
        }
        if let r = parsed.values["retention"], r != "off" {
            guard let seconds = CommandLineTool.duration(r) else {
                throw UsageError("\(parsed.source("retention")) must look like 30d, 12h, 90m or 45s (or off), not '\(r)'")
            }
            c.retention = seconds
        }
        if let list = parsed.values["attributes-types"] {
            c.attributesTypes = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if let bad = c.attributesTypes.first(where: { $0.utf8.count > EventValidator.maxIDLength || IdentifierText.hasControlCharacter($0) }) {
                throw UsageError("\(parsed.source("attributes-types")) holds '\(bad)': a type is at most \(EventValidator.maxIDLength) bytes, without control characters")
            }
        }
        c.engine = try EngineOptions.settings(parsed)
        c.maxBodyBytes = try CommandLineTool.integer(parsed, "max-body-bytes", range: 1024...(64 << 20)) ?? c.maxBodyBytes
        c.maxLiveActivities = try CommandLineTool.integer(parsed, "max-live-activities", range: 1000...100_000_000)
            ?? c.maxLiveActivities
        c.maxInflightBytes = try CommandLineTool.integer(parsed, "max-inflight-bytes", range: 0...(16 << 30)) ?? c.maxInflightBytes
        c.maxConnections = try CommandLineTool.integer(parsed, "max-connections", range: 1...100_000) ?? c.maxConnections
        c.httpThreads = try CommandLineTool.integer(parsed, "http-threads", range: 1...256) ?? c.httpThreads
        c.maxConnectionsPerAddress = try CommandLineTool.integer(parsed, "max-connections-per-address", range: 0...10_000)
            ?? c.maxConnectionsPerAddress
        c.connectionTimeoutSeconds = try CommandLineTool.integer(parsed, "connection-timeout", range: 1...3600) ?? c.connectionTimeoutSeconds
        if let demo = parsed.values["demo"] {
            guard let on = ["true": true, "1": true, "yes": true, "false": false, "0": false, "no": false][demo] else {
                throw UsageError("\(parsed.source("demo")) must be true or false, not '\(demo)'")
            }
            c.demo = on
        }
        if let rate = parsed.values["demo-rate"] {
            guard let r = CommandLineTool.decimalNumber(rate[...]), r > 0, r <= 100_000 else { throw UsageError("\(parsed.source("demo-rate")) must be a number above 0 and at most 100000, not '\(rate)'") }
            c.demoRate = r
        }
        // Those types always have series of their own: more than the label's slots would break
        // the bound that keeps `attributes_type` a closed set.
        let reserved = Set(c.reservedTypes).subtracting([AttributesTypeLabels.other])
        guard reserved.count <= AttributesTypeLabels.limit else {
            throw UsageError("\(parsed.source("attributes-types")) and the templates of \(c.webRoot) name \(reserved.count) "
                             + "attributes types: at most \(AttributesTypeLabels.limit) can have series of their own")
        }
        return c
    }

    static func run(_ args: [String], environment: [String: String]) throws -> Int32 {
        guard let parsed = try CommandLineTool.parse(parser, args, environment) else { return 0 }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        var configuration = try configuration(parsed)
        configuration.log = { log($0) }
        let databasePassword = try CommandLineTool.databasePassword(parsed)

        let signals = TerminationSignals { sig in
            log("\(sig == SIGINT ? "SIGINT" : "SIGTERM") again: exiting without finishing the stop "
                + "(acknowledged events are safe; unanswered requests get no answer)")
        }
        let server: MonitorServer
        do {
            server = try MonitorServer(configuration, databasePassword: databasePassword, onDeposed: signals.interrupt)
        } catch HTTPServerError.cannotBind(let address, let reason) {
            // The database opened: the address is the problem.
            CommandLineTool.printError("error: cannot listen on \(address): \(reason)")
            return 1
        } catch {
            CommandLineTool.printError("error: cannot open the database \(configuration.databasePath): \(error)")
            if let e = error as? SQLiteError, e.isReadOnly {
                CommandLineTool.printError("The server writes the database file, and beside it its -wal and -shm files: "
                    + "the file and its directory must be writable.")
            }
            return 1
        }
        // Over PostgreSQL every commit waits for the server's disk (`--durability` is SQLite's).
        let durability = PostgresStoreDatabase.isPostgresURI(configuration.databasePath)
            ? "synchronous_commit on" : configuration.durability.rawValue
        log("live-activity-monitor \(MonitorServer.version) listening on \(server.baseURL) "
            + "(database \(configuration.databasePath), durability \(durability), "
            + "retention \(configuration.retention.map(Retention.describe) ?? "off"))")
        if StaticFiles(webRoot: configuration.webRoot).root == nil {
            log("warning: web root \(configuration.webRoot) not found; the dashboard will answer 404")
        }
        var demo: DemoTraffic?
        if configuration.demo {
            var options = DemoTraffic.Options()
            options.ratePerMinute = configuration.demoRate
            options.log = { log($0) }
            let (host, port) = DemoTraffic.loopbackAddress(server.baseURL)
            log("demo: posting timer and ride traffic with faults to http://\(host.contains(":") ? "[\(host)]" : host):\(port)/v1/events, "
                + "\(JSONNumber(configuration.demoRate)) activities/min, seed \(options.seed)")
            demo = DemoTraffic.start(baseURL: server.baseURL, token: configuration.ingestToken, options: options)
        }
        let memoryReturn = FreedMemoryReturn()
        signals.wait()
        // A replica that lost the lead stops too, but fails (systemd's Restart=on-failure
        // starts it again, as a standby).
        let deposed = server.lostTheLead
        log("stopping: no new connections, finishing requests, flushing the store")
        demo?.stop()
        server.stop()
        memoryReturn.stop()
        if deposed {
            log("stopped: lost the lead (exit \(Self.deposedStatus), to be started again as a standby)")
            return Self.deposedStatus
        }
        log("stopped")
        return 0
    }

    /// The exit status of a replica that lost the lead: EX_TEMPFAIL, a failure worth a restart.
    static let deposedStatus: Int32 = 75

    static func log(_ message: String) {
        CommandLineTool.writeStandardError("\(RFC3339.format(Date().timeIntervalSince1970)) \(message)\n")
    }
}
