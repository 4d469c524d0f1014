import Foundation

/// `prune --older-than 30d`: delete old events in small transactions; counters are untouched.
enum PruneCommand {
    static let parser = ArgumentParser(
        command: "prune", usage: "prune --older-than <30d|12h|90m|45s> [--db PATH|URI] [--db-password-file F]",
        summary: """
            Deletes events that occurred before the given age, and dismissed activities gone
            before it, 5000 rows per transaction with pauses between, so a running server keeps
            ingesting. Counters in /metrics do not change. Then gives free pages back to the
            file system and empties the write-ahead log. `serve --retention` does the same
            automatically. Over PostgreSQL (--db postgres://…) it drops the day partitions of
            events whose whole day is older than the age, as `serve --retention` does there
            (dismissed activities are kept); safe while servers run.
            """,
        options: [
            .init(name: "older-than", environment: "LAM_PRUNE_OLDER_THAN", valueName: "AGE", help: "Age such as 30d, 12h, 90m or 45s (required)."),
            CommandLineTool.dbOption,
            CommandLineTool.dbPasswordFileOption,
        ])

    static func run(_ args: [String], environment: [String: String]) throws -> Int32 {
        guard let parsed = try CommandLineTool.parse(parser, args, environment) else { return 0 }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        guard let age = parsed.values["older-than"] else { throw UsageError("--older-than is required") }
        guard let seconds = CommandLineTool.duration(age) else {
            throw UsageError("\(parsed.source("older-than")) must look like 30d, 12h, 90m or 45s, not '\(age)'")
        }
        let cutoff = Date().timeIntervalSince1970 - seconds
        switch try CommandLineTool.databaseLocation(parsed) {
        case .sqlite(let path):
            guard FileManager.default.fileExists(atPath: path) else { throw UsageError("no database at \(path)") }
            let db = try Retention.open(path)
            let result = try Retention.prune(db, before: cutoff, batch: 5000)
            print("pruned \(result.events) events and \(result.activities) dismissed activities older than \(age)")
        case .postgres(let uri, let password):
            let db = try CommandLineTool.existingPostgresDatabase(uri: uri, password: password)
            let before = PostgresEventPartitions.day(cutoff)
            let events = try db.prepared("SELECT count(*) FROM events WHERE day < $1::integer", [.integer(before)]).scalar?.int64Value ?? 0
            let days = try PostgresEventPartitions.drop(before: before, db)
            print("pruned \(events) events (\(days.count) whole days) older than \(age); dismissed activities are kept")
        }
        return 0
    }
}
