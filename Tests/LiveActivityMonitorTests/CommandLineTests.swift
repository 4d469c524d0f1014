import Foundation
import HTTPServer
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// The real executable, run as a user would: help, usage errors, history, import, prune, and
/// `serve` stopped by SIGTERM.
@Suite struct CommandLineTests {
    static var binary: String { Repository.binary }

    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String], environment: [String: String] = [:], in directory: String? = nil) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        if let directory { p.currentDirectoryURL = URL(fileURLWithPath: directory) }
        p.arguments = arguments
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    @Test(arguments: ["serve", "history", "import", "prune", "migrate"])
    func everyCommandHasHelp(_ command: String) throws {
        let r = try Self.run([command, "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("Usage: live-activity-monitor \(command)"))
        #expect(r.stdout.contains("--db"))
    }

    @Test func topLevelHelpListsCommands() throws {
        let r = try Self.run(["--help"])
        #expect(r.status == 0)
        for command in ["serve", "history", "import", "prune", "--version"] { #expect(r.stdout.contains(command)) }
        #expect(try Self.run(["--version"]).stdout.hasPrefix("live-activity-monitor "))
    }

    /// More attributes types than the label has slots.
    static let fiftyOneTypes = (0..<51).map { "T\($0)" }.joined(separator: ",")

    @Test(arguments: [
        (["serve", "--bogus"], "unknown option --bogus"),
        (["serve", "--port", "70000"], "--port must be an integer"),
        (["serve", "--port"], "needs a value"),
        (["serve", "--port", "--db", "x.sqlite"], "--port needs a value"),
        (["serve", "--db", ""], "--db must not be empty"),
        (["serve", "--db", "/tmp"], "--db names a directory, /tmp"),
        (["history", "--db", "/tmp", "BK-1"], "--db names a directory, /tmp"),
        (["serve", "--attributes-types", fiftyOneTypes], "at most 50 can have series of their own"),
        (["serve", "--durability", "sometimes"], "--durability must be normal or full"),
        (["serve", "--max-connections-per-address", "-1"], "--max-connections-per-address must be an integer"),
        (["serve", "--retention", "soon"], "--retention must look like 30d"),
        (["serve", "--retention", "0x10d"], "--retention must look like 30d"),
        (["serve", "--host", "monitor.example"], "--host must be an IPv4 or IPv6 address"),
        (["serve", "--host", "999.1.1.1"], "--host must be an IPv4 or IPv6 address"),
        (["serve", "--demo-rate", "1e9"], "--demo-rate must be a number above 0 and at most 100000, not '1e9'"),
        (["prune", "--older-than", "1e1d"], "--older-than must look like"),
        (["prune", "--older-than", "soon"], "--older-than must look like"),
        (["prune"], "--older-than is required"),
        (["history"], "exactly one booking id"),
        (["frobnicate"], "unknown command"),
    ])
    func usageErrorsExitTwoWithOneClearLine(_ arguments: [String], _ message: String) throws {
        let r = try Self.run(arguments)
        #expect(r.status == 2)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").first?.hasPrefix("error: ") == true)
    }

    @Test func theHelpHintNamesARealCommand() throws {
        #expect(try Self.run(["frobnicate"]).stderr.contains("Run 'live-activity-monitor --help'"))
        #expect(try Self.run(["prune"]).stderr.contains("Run 'live-activity-monitor prune --help'"))
    }

    @Test func environmentVariablesConfigureAndFlagsWin() throws {
        var r = try Self.run(["serve"], environment: ["LAM_PORT": "notaport"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("LAM_PORT (--port) must be an integer"), "names where the value came from: \(r.stderr)")
        #expect(r.stderr.contains("not 'notaport'"))
        r = try Self.run(["serve", "--port", "-1"], environment: ["LAM_PORT": "9464"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("error: --port must"), "\(r.stderr)")
        #expect(r.stderr.contains("not '-1'"))
        r = try Self.run(["serve"], environment: ["LAM_DURABILITY": "sometimes"])
        #expect(r.stderr.contains("LAM_DURABILITY (--durability) must be normal or full"), "\(r.stderr)")
        r = try Self.run(["serve"], environment: ["LAM_HOST": "localhost"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("LAM_HOST (--host) must be an IPv4 or IPv6 address"), "\(r.stderr)")
        r = try Self.run(["prune"], environment: ["LAM_PRUNE_OLDER_THAN": "soon"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("LAM_PRUNE_OLDER_THAN (--older-than) must look like"), "\(r.stderr)")
    }

    /// Integer flags (and their variables) take plain decimal digits only: `Int(_:)` alone also
    /// takes a sign, so `+80` was port 80 and `-0` port 0.
    @Test(arguments: ["+80", "-0", "+0", " 80", "80 ", "0x50", "1_000", "８０", ""])
    func integerFlagsTakeOnlyDecimalDigits(_ text: String) throws {
        let parsed = ArgumentParser.Parsed(values: ["port": text])
        #expect(throws: UsageError.self) { try CommandLineTool.integer(parsed, "port", range: 0...65535) }
    }

    /// `serve`'s integer flags and their variables, checked in process: a value wrongly accepted
    /// would make the real binary start a server (on port 80 for `+80`).
    @Test(arguments: [
        (["--port", "+80"], [:], "--port must be an integer from 0 to 65535, not '+80'"),
        (["--port", " 80"], [:], "--port must be an integer from 0 to 65535, not ' 80'"),
        (["--port", "0x50"], [:], "--port must be an integer from 0 to 65535, not '0x50'"),
        (["--port=-0"], [:], "--port must be an integer from 0 to 65535, not '-0'"),
        ([], ["LAM_PORT": "+80"], "LAM_PORT (--port) must be an integer from 0 to 65535, not '+80'"),
        (["--max-connections", "+5"], [:], "--max-connections must be an integer from 1 to 100000, not '+5'"),
        (["--max-body-bytes", "+2048"], [:], "--max-body-bytes must be an integer from 1024 to 67108864, not '+2048'"),
        ([], ["LAM_CONNECTION_TIMEOUT": "+30"], "LAM_CONNECTION_TIMEOUT (--connection-timeout) must be an integer from 1 to 3600, not '+30'"),
    ] as [([String], [String: String], String)])
    func serveIntegerFlagsTakeOnlyDecimalDigits(_ arguments: [String], _ environment: [String: String], _ message: String) throws {
        let parsed = try ServeCommand.parser.parse(arguments, environment: environment)
        do {
            _ = try ServeCommand.configuration(parsed)
            Issue.record("accepted: \(arguments) \(environment)")
        } catch let error as UsageError {
            #expect(error.message == message)
        }
    }

    /// `--demo-rate` is a plain decimal number, as the durations are: `Double` alone took hex,
    /// exponents and a sign (`0x10` was 16 a minute).
    @Test func theDemoRateIsADecimalNumber() throws {
        for good in ["20", "0.5", "100000", "7."] {
            #expect(throws: Never.self) { try ServeCommand.configuration(try ServeCommand.parser.parse(["--demo-rate", good], environment: [:])) }
        }
        #expect(try ServeCommand.configuration(try ServeCommand.parser.parse([], environment: ["LAM_DEMO_RATE": "0.5"])).demoRate == 0.5)
        for bad in ["0x10", "1e3", "+5", " 5", "5 ", "-1", "inf", "nan", "0", "100001", "1.2.3", ""] {
            #expect(throws: UsageError.self, "\(bad)") {
                try ServeCommand.configuration(try ServeCommand.parser.parse(["--demo-rate=\(bad)"], environment: [:]))
            }
        }
    }

    @Test func theRulesWindowsAreDurationFlags() throws {
        let defaults = try ServeCommand.configuration(try ServeCommand.parser.parse([], environment: [:]))
        #expect(defaults.engine == EngineSettings(deliveryGrace: 120, startWindow: 900))
        let flags = try ServeCommand.parser.parse(["--delivery-grace", "30s", "--start-window", "5m"], environment: [:])
        #expect(try ServeCommand.configuration(flags).engine == EngineSettings(deliveryGrace: 30, startWindow: 300))
        let variables = try ServeCommand.parser.parse([], environment: ["LAM_DELIVERY_GRACE": "2m", "LAM_START_WINDOW": "1h"])
        #expect(try ServeCommand.configuration(variables).engine == EngineSettings(deliveryGrace: 120, startWindow: 3600))
        for bad in [["--start-window", "0s"], ["--delivery-grace", "2d"], ["--start-window", "15"]] {
            #expect(throws: UsageError.self) { try ServeCommand.configuration(try ServeCommand.parser.parse(bad, environment: [:])) }
        }
        let help = ServeCommand.parser.helpText
        #expect(help.contains("--delivery-grace") && help.contains("LAM_DELIVERY_GRACE"))
        #expect(help.contains("--start-window") && help.contains("LAM_START_WINDOW"))
    }

    @Test func attributesTypesAreAListOfIdentifiers() throws {
        let parsed = try ServeCommand.parser.parse(["--attributes-types", " RideAttributes, TimerWidgetAttributes ,,"], environment: [:])
        #expect(try ServeCommand.configuration(parsed).attributesTypes == ["RideAttributes", "TimerWidgetAttributes"])
        let bad = try ServeCommand.parser.parse([], environment: ["LAM_ATTRIBUTES_TYPES": "Ride,Bell\u{7}"])
        #expect(throws: UsageError.self) { try ServeCommand.configuration(bad) }
    }

    @Test func integerFlagsStillTakeDigits() throws {
        #expect(try CommandLineTool.integer(ArgumentParser.Parsed(values: ["port": "8080"]), "port", range: 0...65535) == 8080)
        #expect(try CommandLineTool.integer(ArgumentParser.Parsed(values: ["port": "0"]), "port", range: 0...65535) == 0)
        #expect(try CommandLineTool.integer(ArgumentParser.Parsed(values: ["port": "080"]), "port", range: 0...65535) == 80)
    }

    /// `--` ends the options: what follows is positional even when it starts with a dash.
    @Test func doubleDashEndsTheOptions() throws {
        let parser = HistoryCommand.parser
        var p = try parser.parse(["--", "-BK1"], environment: [:])
        #expect(p.positionals == ["-BK1"])
        p = try parser.parse(["--db", "x.sqlite", "--", "--help", "-h", "--db", "--"], environment: [:])
        #expect(p.positionals == ["--help", "-h", "--db", "--"])
        #expect(!p.helpRequested)
        #expect(p.values["db"] == "x.sqlite")
        // Before `--`, unchanged: an option's value may be `--`, and `--db=…` after it is positional.
        p = try parser.parse(["--db", "--", "BK"], environment: [:])
        #expect(p.values["db"] == "--" && p.positionals == ["BK"])
        p = try parser.parse(["BK", "--", "--db=y"], environment: [:])
        #expect(p.positionals == ["BK", "--db=y"] && p.values["db"] == nil)
        #expect(throws: UsageError.self) { try parser.parse(["--bogus", "--", "BK"], environment: [:]) }
    }

    @Test func historyAndImportTakeDashedArgumentsAfterDoubleDash() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = dir + "/db.sqlite", name = "-events.ndjson"
        let lines = ["-BK1", "-h", "--db"].enumerated().map { i, booking in
            "{\"type\":\"activity.started\",\"activity_id\":\"dash-\(i)\",\"booking_id\":\"\(booking)\","
                + "\"attributes_type\":\"TimerWidgetAttributes\",\"occurred_at\":\"2026-11-29T14:00:00Z\",\"content_state\":{}}"
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
        var r = try Self.run(["import", "--db", db, "--", name], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("imported 3 events"), "\(r.stdout)")
        for (i, booking) in ["-BK1", "-h", "--db"].enumerated() {
            r = try Self.run(["history", "--db", db, "--", booking])
            #expect(r.status == 0, "\(booking): \(r.stderr)")
            #expect(r.stdout.hasPrefix("Booking \(booking)\n") && r.stdout.contains("dash-\(i)"), "\(booking): \(r.stdout)")
        }
        #expect(try Self.run(["history", "--help"]).stdout.contains("Usage: live-activity-monitor history [--db PATH|URI] [--db-password-file F] [--format text|ndjson|csv] [rule options] [--] <booking-id>"))
        #expect(try Self.run(["import", "--help"]).stdout.contains("Usage: live-activity-monitor import [--db PATH|URI] [--db-password-file F] [--] <file.ndjson>"))
    }

    /// `--help` says what the command takes: prune's ages in seconds too, `--retention off`.
    @Test func helpNamesEveryFormOfAnAge() throws {
        #expect(try Self.run(["prune", "--help"]).stdout.contains("Usage: live-activity-monitor prune --older-than <30d|12h|90m|45s>"))
        #expect(try Self.run(["prune", "--older-than", "45s", "--db", "/nonexistent.sqlite"]).stderr.contains("no database at"))
        let serve = try Self.run(["serve", "--help"]).stdout
        #expect(serve.contains("off turns it off"), "\(serve)")
        let off = try ServeCommand.parser.parse(["--retention", "off"], environment: ["LAM_RETENTION": "30d"])
        #expect(try ServeCommand.configuration(off).retention == nil)
    }

    /// Some Windows tools start a UTF-8 file with a byte-order mark: import skips it there, and
    /// only there.
    @Test func importSkipsAByteOrderMarkAtTheStartOnly() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/events.ndjson"
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let lines = Scenario.events.map { Array($0.jsonString.utf8) }
        try Data(bom + Array(lines.joined(separator: [0x0D, 0x0A])) + [0x0D, 0x0A]).write(to: URL(fileURLWithPath: file))
        var r = try Self.run(["import", file, "--db", dir + "/a.sqlite"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("imported 16 events, 0 duplicates"), "\(r.stdout)")

        try Data(lines[0] + [0x0A] + bom + lines[1] + [0x0A]).write(to: URL(fileURLWithPath: file))
        r = try Self.run(["import", file, "--db", dir + "/b.sqlite"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("events.ndjson: line 2 is not valid JSON"), "\(r.stderr)")
    }

    @Test func historyShowsControlCharactersInIDsEscaped() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = dir + "/db.sqlite", file = dir + "/events.ndjson"
        let hostile = "a\u{1B}[31mRED\r\nFAKE\u{202E}"
        try (IngestTests.started("plain").jsonString + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try Self.run(["import", file, "--db", db]).status == 0)
        // Ingest refuses control characters in ids now; a file written before that may hold them.
        do {
            let sql = try Database(path: db)
            try sql.run("UPDATE events SET activity_id = ?1, booking_id = ?2, body = json_set(body, '$.activity_id', ?1, '$.booking_id', ?2)",
                        [.text(hostile), .text("BK-" + hostile)])
            try sql.run("UPDATE activities SET activity_id = ?1, booking_id = ?2", [.text(hostile), .text("BK-" + hostile)])
        }
        let r = try Self.run(["history", "BK-" + hostile, "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("a\\u{1b}[31mRED\\u{d}\\u{a}FAKE\\u{202e}"), "\(r.stdout)")
        #expect(!r.stdout.contains("\u{1B}") && !r.stdout.contains("\r") && !r.stdout.contains("\u{202E}"))
        #expect(r.stdout.split(separator: "\n").filter { $0.hasPrefix("FAKE") }.isEmpty)
    }

    @Test func importHistoryAndPrune() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = dir + "/db.sqlite", file = dir + "/events.ndjson"
        let lines = Scenario.events.map(\.jsonString).joined(separator: "\n") + "\n"
        try lines.write(toFile: file, atomically: true, encoding: .utf8)

        var r = try Self.run(["import", file, "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("imported 16 events, 0 duplicates"))
        r = try Self.run(["import", file], environment: ["LAM_DB": db])
        #expect(r.stdout.contains("imported 0 events, 16 duplicates"))

        r = try Self.run(["history", "BK-1042", "--db", db])
        #expect(r.status == 0)
        let out = r.stdout
        #expect(out.contains("ride-1  LiveActivityAttributes"))
        #expect(out.contains("update → 429 TooManyRequests"))
        #expect(!out.contains(Scenario.tokenA), "raw tokens are never shown")
        let lineOfRotation = out.range(of: "activity.token_updated")
        let lineOfEnd = out.range(of: "end → 200")
        #expect(lineOfRotation != nil && lineOfEnd != nil && lineOfRotation!.lowerBound < lineOfEnd!.lowerBound)

        r = try Self.run(["history", "BK-nope", "--db", db])
        #expect(r.status == 1)
        #expect(r.stderr.contains("no booking"))

        let bad = dir + "/bad.ndjson"
        try "{\"type\":\"activity.started\"}\n".write(toFile: bad, atomically: true, encoding: .utf8)
        r = try Self.run(["import", bad, "--db", db])
        #expect(r.status == 1)
        #expect(r.stderr.contains("bad.ndjson: line 1: "), "\(r.stderr)")
        #expect(!r.stderr.contains("line 2"), "the final newline ends line 1: \(r.stderr)")
        #expect(r.stderr.contains("line 1: activity_id: required"), "\(r.stderr)")

        r = try Self.run(["prune", "--older-than", "1d", "--db", db])
        #expect(r.status == 0)
        #expect(r.stdout.contains("pruned 16 events"), "the scenario is days old: \(r.stdout)")
    }

    /// `serve --port 0 --db DIR/db.sqlite` plus `arguments`, its standard error, what it logged
    /// until it listened, and the port it took.
    static func startServe(in dir: String, _ arguments: [String] = []) throws -> (process: Process, stderr: Pipe, log: String, port: Int) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = ["serve", "--port", "0", "--db", dir + "/db.sqlite"] + arguments
        let err = Pipe()
        p.standardError = err
        try p.run()
        var log = ""
        let deadline = Date().addingTimeInterval(10)
        while !log.contains("listening on"), Date() < deadline {
            log += String(decoding: err.fileHandleForReading.availableData, as: UTF8.self)
        }
        let port = try #require(log.split(separator: "127.0.0.1:").last.flatMap { Int($0.prefix { $0.isNumber }) })
        return (p, err, log, port)
    }

    /// A stop held up by an unfinished request (the 10 s grace period) ends at once on a
    /// second SIGTERM, saying so; what was acknowledged before is kept.
    @Test func aSecondSIGTERMEndsAStopAtOnce() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (p, err, log, port) = try Self.startServe(in: dir)
        let posted = try HTTPClient(port: port).request("POST", "/v1/events", headers: [("Content-Type", "application/json")],
                                                       body: Array(IngestTests.started("a1").jsonString.utf8))
        #expect(posted.status == 200)
        // A request whose body never ends keeps the stop in its grace period.
        let held = try RawConnection(port: port)
        try held.send("POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        Thread.sleep(forTimeInterval: 0.2)
        let started = Date()
        p.terminate()
        Thread.sleep(forTimeInterval: 0.5)
        p.terminate()
        p.waitUntilExit()
        log += String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(Date().timeIntervalSince(started) < 5, "the second SIGTERM was ignored")
        #expect(p.terminationStatus == 128 + SIGTERM)
        #expect(log.contains("SIGTERM again: exiting"), "\(log)")
        #expect(try Database(path: dir + "/db.sqlite", mode: .readOnly).scalar("SELECT count(*) FROM events") == .integer(1))
    }

    /// `serve … 2>&1 | tee log` after tee is gone: the next log line meets a closed pipe.
    @Test func serveOutlivesTheReaderOfItsLog() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (p, err, _, port) = try Self.startServe(in: dir, ["--max-connections", "1"])
        try err.fileHandleForReading.close()
        // A connection over the limit makes libmicrohttpd log, to the closed pipe.
        let held = HTTPClient(port: port)
        #expect(try held.request("GET", "/-/healthy").status == 200)
        if let extra = try? RawConnection(port: port) {
            _ = extra.readUntilClosed(seconds: 2)
            extra.close()
        }
        held.close()
        var status: Int?
        let retryUntil = Date().addingTimeInterval(3)
        while status != 200, Date() < retryUntil, p.isRunning {
            status = try? HTTPClient(port: port, timeoutSeconds: 2).request("GET", "/-/healthy").status
        }
        #expect(p.isRunning, "the server died writing its log (status \(p.terminationStatus))")
        #expect(status == 200)
        p.terminate()
        p.waitUntilExit()
        #expect(p.terminationReason == .exit && p.terminationStatus == 0)
    }

    @Test func everyCommandRefusesADatabaseFromANewerVersion() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = dir + "/db.sqlite", file = dir + "/events.ndjson"
        try (Scenario.events.map(\.jsonString).joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try Self.run(["import", file, "--db", db]).status == 0)
        try Database(path: db).setUserVersion(99)

        let refusal = "db.sqlite has schema version 99 but this program knows only \(Schema.migrations.count): "
            + "it was written by a newer version; refusing to use it"
        for arguments in [["prune", "--older-than", "1m"], ["import", file], ["history", "BK-1042"]] {
            let r = try Self.run(arguments + ["--db", db])
            #expect(r.status == 1, "\(arguments[0]): \(r.stdout) \(r.stderr)")
            #expect(r.stderr.contains(refusal), "\(arguments[0]): \(r.stderr)")
            #expect(!r.stdout.contains("pruned"), "\(r.stdout)")
        }
        let after = try Database(path: db, mode: .readOnly)
        #expect(try after.scalar("SELECT count(*) FROM events") == .integer(Int64(Scenario.events.count)))
        #expect(try after.userVersion == 99)

        let foreign = dir + "/other.sqlite"
        try Database(path: foreign).execute("CREATE TABLE notes (text TEXT)")
        let r = try Self.run(["prune", "--older-than", "1d", "--db", foreign])
        #expect(r.status == 1 && r.stderr.contains("is not a live-activity-monitor database"), "\(r.stderr)")
        let h = try Self.run(["history", "BK-1042", "--db", foreign])
        #expect(h.status == 1 && h.stderr.contains("is not a live-activity-monitor database"), "\(h.stderr)")

        // history reads tables an older file lacks: it says so rather than failing in SQL.
        let older = dir + "/older.sqlite"
        try Database(path: older).migrate(Array(Schema.migrations.dropLast()))
        let o = try Self.run(["history", "BK-1042", "--db", older])
        #expect(o.status == 1 && o.stderr.contains("was written by an older version of live-activity-monitor; start `live-activity-monitor serve --db"),
                "\(o.stderr)")
    }

    /// An import that stops names the bad line by its number in the file, past the first
    /// block of 1000 lines and with a blank line before it; fixed, it runs again and the ids
    /// make the events stored the first time duplicates.
    @Test func importNamesTheBadLineByItsNumberInTheFile() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/events.ndjson"
        var lines = (0..<1500).map { IngestTests.started("imp-\($0)", eventID: "e\($0)").jsonString }
        lines.insert("", at: 1200)
        let good = lines[1302]
        func importInto(_ db: String) throws -> Run {
            try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            return try Self.run(["import", file, "--db", dir + "/" + db])
        }

        lines[1302] = "{\"type\": oops"                               // line 1303 of the file
        var r = try importInto("a.sqlite")
        #expect(r.status == 1)
        #expect(r.stderr.contains("events.ndjson: line 1303 is not valid JSON: unexpected 'o' at line 1303, column 10"), "\(r.stderr)")
        #expect(r.stderr.contains("stored so far: 1000 events (0 duplicates), lines 1–1000; nothing from lines 1001–1501"), "\(r.stderr)")

        lines[1302] = "{\"type\":\"activity.started\"}"
        r = try importInto("b.sqlite")
        #expect(r.status == 1)
        #expect(r.stderr.contains("events.ndjson: line 1303: "), "\(r.stderr)")
        #expect(r.stderr.contains("line 1303: activity_id: required"), "\(r.stderr)")
        #expect(!r.stderr.contains("1302"), "\(r.stderr)")

        lines[1302] = good
        r = try importInto("b.sqlite")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("imported 500 events, 1000 duplicates"), "\(r.stdout)")
    }

    /// A wrong file is named with what is wrong with it: the system's reason for a file that
    /// cannot be opened, a file that is no SQLite database, another program's database (which
    /// `serve` and `import` used to fill with their tables), a directory for `migrate --from`.
    @Test func badFilesAreNamedWithWhatIsWrong() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/events.ndjson"
        try (IngestTests.started("a1").jsonString + "\n").write(toFile: file, atomically: true, encoding: .utf8)

        var r = try Self.run(["import", "--db", dir + "/db.sqlite", dir + "/missing.ndjson"])
        #expect(r.status == 2 && r.stderr.contains("error: cannot read \(dir)/missing.ndjson (open: No such file or directory)"), "\(r.stderr)")
        r = try Self.run(["import", "--db", dir + "/db.sqlite", dir])
        #expect(r.status == 2 && r.stderr.contains("error: cannot read \(dir) (read: Is a directory)"), "\(r.stderr)")
        r = try Self.run(["import", "--db", dir + "/nowhere/db.sqlite", file])
        #expect(r.status == 1 && r.stderr.contains("unable to open database file (No such file or directory), opening \(dir)/nowhere/db.sqlite"),
                "\(r.stderr)")

        let garbage = dir + "/garbage.sqlite"
        try String(repeating: "not a database\n", count: 100).write(toFile: garbage, atomically: true, encoding: .utf8)
        let notSQLite = "\(garbage) is not an SQLite database (SQLite: file is not a database)"
        for arguments in [["import", file], ["history", "BK-1"], ["prune", "--older-than", "1d"], ["serve", "--port", "0"]] {
            r = try Self.run(arguments + ["--db", garbage])
            #expect(r.status == 1 && r.stderr.contains(notSQLite), "\(arguments[0]): \(r.stderr)")
        }
        r = try Self.run(["migrate", "--from", garbage, "--to", "postgres://nobody@127.0.0.1:1/none"])
        #expect(r.status == 1 && r.stderr.contains(notSQLite), "\(r.stderr)")

        let foreign = dir + "/app.sqlite"
        try Database(path: foreign).execute("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('keep')")
        r = try Self.run(["import", file, "--db", foreign])
        #expect(r.status == 1, "\(r.stdout)")
        #expect(r.stderr.contains("\(foreign) is not a live-activity-monitor database: it holds another program's tables (notes)"), "\(r.stderr)")
        #expect(try Database(path: foreign, mode: .readOnly).scalar("SELECT group_concat(name) FROM sqlite_master") == .text("notes"))

        r = try Self.run(["migrate", "--from", dir, "--to", "postgres://nobody@127.0.0.1:1/none"])
        #expect(r.status == 2 && r.stderr.contains("error: --from names a directory, \(dir)"), "\(r.stderr)")
    }

    /// A serve that cannot bind says so, and does not blame the database.
    @Test func aPortInUseIsNamedAsTheProblem() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (p, _, _, port) = try Self.startServe(in: dir)
        defer { p.terminate(); p.waitUntilExit() }
        let r = try Self.run(["serve", "--port", "\(port)", "--db", dir + "/other.sqlite"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("error: cannot listen on 127.0.0.1:\(port)"), "\(r.stderr)")
        #expect(!r.stderr.contains("cannot start on"), "\(r.stderr)")
    }

    @Test func serveStopsCleanlyOnSIGTERM() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (p, err, log, port) = try Self.startServe(in: dir)
        #expect(log.contains("listening on http://127.0.0.1:"))
        let posted = try HTTPClient(port: port).request("POST", "/v1/events", headers: [("Content-Type", "application/json")],
                                                       body: Array(IngestTests.started("a1").jsonString.utf8))
        #expect(posted.status == 200)
        p.terminate()
        p.waitUntilExit()
        log += String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationStatus == 0)
        #expect(log.contains("stopped"))

        // After a clean stop the database file alone holds everything: a copy without the
        // -wal file beside it (a careless backup) still has the event.
        let copy = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: dir + "/db.sqlite", toPath: copy + "/db.sqlite")
        #expect(try Database(path: copy + "/db.sqlite", mode: .readOnly).scalar("SELECT count(*) FROM events") == .integer(1))
    }
}
