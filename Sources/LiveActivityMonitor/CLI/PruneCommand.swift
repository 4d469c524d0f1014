import Foundation

/// `prune --older-than 30d`: delete old events in small transactions; counters are untouched.
enum PruneCommand {
    static let parser = ArgumentParser(
        command: "prune", usage: "prune --older-than <30d|12h|90m> [--db PATH]",
        summary: """
            Deletes events that occurred before the given age, and dismissed activities gone
            before it, 5000 rows per transaction with pauses between, so a running server keeps
            ingesting. Counters in /metrics do not change. Then gives free pages back to the
            file system and empties the write-ahead log. `serve --retention` does the same
            automatically.
            """,
        options: [
            .init(name: "older-than", environment: "LAM_PRUNE_OLDER_THAN", valueName: "AGE", help: "Age such as 30d, 12h or 90m (required)."),
            CommandLineTool.dbOption,
        ])

    static func run(_ args: [String], environment: [String: String]) throws -> Int32 {
        guard let parsed = try CommandLineTool.parse(parser, args, environment) else { return 0 }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        guard let age = parsed.values["older-than"] else { throw UsageError("--older-than is required") }
        guard let seconds = CommandLineTool.duration(age) else {
            throw UsageError("\(parsed.source("older-than")) must look like 30d, 12h, 90m or 45s, not '\(age)'")
        }
        let path = try CommandLineTool.sqliteDatabasePath(parsed, command: "prune")
        guard FileManager.default.fileExists(atPath: path) else { throw UsageError("no database at \(path)") }
        let db = try Retention.open(path)
        let result = try Retention.prune(db, before: Date().timeIntervalSince1970 - seconds, batch: 5000)
        print("pruned \(result.events) events and \(result.activities) dismissed activities older than \(age)")
        return 0
    }
}
