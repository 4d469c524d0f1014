import Foundation
import SQLiteDB

/// `prune --older-than 30d`: delete old events in small transactions; counters are untouched.
enum PruneCommand {
    static let parser = ArgumentParser(
        command: "prune", usage: "prune --older-than <30d|12h|90m> [--db PATH]",
        summary: """
            Deletes events that occurred before the given age, and dismissed activities gone
            before it, 5000 rows per transaction so a running server keeps ingesting. Counters in
            /metrics do not change. Then gives free pages back to the file system.
            """,
        options: [
            .init(name: "older-than", environment: nil, valueName: "AGE", help: "Age such as 30d, 12h or 90m (required)."),
            CommandLineTool.dbOption,
        ])

    static func run(_ args: [String], environment: [String: String]) throws -> Int32 {
        guard let parsed = try CommandLineTool.parse(parser, args, environment) else { return 0 }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        guard let age = parsed.values["older-than"] else { throw UsageError("--older-than is required") }
        guard let seconds = CommandLineTool.duration(age) else {
            throw UsageError("--older-than must look like 30d, 12h, 90m or 45s, not '\(age)'")
        }
        let path = parsed.values["db"] ?? MonitorConfiguration().databasePath
        guard FileManager.default.fileExists(atPath: path) else { throw UsageError("no database at \(path)") }
        let db = try Database(path: path)
        let result = try prune(db, before: Date().timeIntervalSince1970 - seconds)
        print("pruned \(result.events) events and \(result.activities) dismissed activities older than \(age)")
        return 0
    }

    static func prune(_ db: Database, before cutoff: Double, batch: Int = 5000) throws -> (events: Int, activities: Int) {
        var events = 0, activities = 0
        while true {
            let n = try db.transaction(.immediate) { () throws -> Int in
                try db.run("DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE occurred_at < ? LIMIT ?)",
                           [.real(cutoff), .integer(Int64(batch))])
                return db.changes
            }
            events += n
            if n < batch { break }
        }
        try db.transaction(.immediate) {
            try db.run("DELETE FROM activities WHERE dismissed_at IS NOT NULL AND dismissed_at < ?", [.real(cutoff)])
            activities = db.changes
        }
        try db.execute("PRAGMA incremental_vacuum")
        try db.checkpoint(truncate: true)
        return (events, activities)
    }
}
