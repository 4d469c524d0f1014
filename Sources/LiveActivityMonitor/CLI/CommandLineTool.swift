import Foundation

/// The `live-activity-monitor` command: subcommands, `--help` on each, and for usage mistakes
/// the error, where to find help, and exit status 2.
public enum CommandLineTool {
    static let overview = """
        Usage: live-activity-monitor <command> [options]

        Observability for iOS Live Activities: ingests APNs push results and ActivityKit lifecycle
        events into SQLite or PostgreSQL, exports Prometheus metrics and serves the lock-screen
        dashboard.

        Commands:
          serve      Run the server (ingest, /metrics, read API, dashboard).
          history    Print a booking's timeline: every activity and event, in time order.
          import     Load events from an NDJSON file into the database.
          prune      Delete events older than a given age (counters are kept).
          migrate    Copy an SQLite database into an empty PostgreSQL one, verified by counts.

        Run 'live-activity-monitor <command> --help' for a command's options,
        'live-activity-monitor --version' for the version.

        """

    static let commands = ["serve", "history", "import", "prune", "migrate"]

    /// Runs the command line and returns the process exit status.
    public static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
        var args = Array(arguments.dropFirst())
        guard let command = args.first else {
            writeStandardError(overview)
            return 2
        }
        args.removeFirst()
        do {
            switch command {
            case "serve": return try ServeCommand.run(args, environment: environment)
            case "history": return try HistoryCommand.run(args, environment: environment)
            case "import": return try ImportCommand.run(args, environment: environment)
            case "prune": return try PruneCommand.run(args, environment: environment)
            case "migrate": return try MigrateCommand.run(args, environment: environment)
            case "--help", "-h", "help":
                print(overview, terminator: "")
                return 0
            case "--version", "version":
                print("live-activity-monitor \(MonitorServer.version)")
                return 0
            default:
                throw UsageError("unknown command '\(command)'; expected serve, history, import, prune or migrate")
            }
        } catch let error as UsageError {
            let helpCommand = commands.contains(command) ? command + " --help" : "--help"
            printError("error: \(error.message)\nRun 'live-activity-monitor \(helpCommand)' for usage.")
            return 2
        } catch {
            printError("error: \(error)")
            return 1
        }
    }

    static func printError(_ message: String) {
        writeStandardError(message + "\n")
    }

    /// Writes to standard error and ignores failure: `FileHandle.write` traps when the reader has
    /// gone (EPIPE), and a server must outlive the program that reads its log.
    static func writeStandardError(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Parses, or prints help and returns nil.
    static func parse(_ parser: ArgumentParser, _ args: [String], _ environment: [String: String]) throws(UsageError) -> ArgumentParser.Parsed? {
        let parsed = try parser.parse(args, environment: environment)
        if parsed.helpRequested {
            print(parser.helpText, terminator: "")
            return nil
        }
        return parsed
    }

    static func integer(_ parsed: ArgumentParser.Parsed, _ name: String, range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = parsed.values[name] else { return nil }
        // Decimal digits only: `Int` alone also takes a sign, so `+80` was port 80 and `-0` port 0.
        guard text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let value = Int(text), range.contains(value) else {
            throw UsageError("\(parsed.source(name)) must be an integer from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }

    /// Decimal digits with at most one point ("20", "0.5"): `Double` alone would also take 0x10,
    /// 1e3, inf and a sign.
    static func decimalNumber(_ text: Substring) -> Double? {
        guard text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), text.filter({ $0 == "." }).count <= 1
        else { return nil }
        return Double(text)
    }

    /// "30d", "12h", "90m", "45s" → seconds.
    static func duration(_ text: String) -> Double? {
        guard let unit = text.last, let n = decimalNumber(text.dropLast()), n > 0, n.isFinite else { return nil }
        switch unit {
        case "d": return n * 86_400
        case "h": return n * 3600
        case "m": return n * 60
        case "s": return n
        default: return nil
        }
    }

    /// A token file's content, trimmed; never a token from the command line, where `ps` shows it.
    static func readToken(_ parsed: ArgumentParser.Parsed, _ name: String) throws -> String? {
        guard let path = parsed.values[name] else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("\(parsed.source(name)): cannot read \(path)")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        // Visible ASCII only: a header carries nothing else reliably, and bytes that are not
        // UTF-8 all decode (here and in the header) to U+FFFD, so any such bytes would match.
        guard token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw UsageError("\(parsed.source(name)): the token in \(path) must be one line of visible ASCII "
                             + "(no spaces; e.g. head -c 24 /dev/urandom | base64)")
        }
        guard token.count >= 16 else { throw UsageError("\(parsed.source(name)): the token in \(path) is shorter than 16 characters") }
        return token
    }
}
