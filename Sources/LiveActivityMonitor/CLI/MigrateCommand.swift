import Foundation
import SQLiteDB

/// `migrate --from FILE --to postgres://…`: moves a monitor from SQLite to PostgreSQL (DESIGN.md
/// section 7), verified by counting each table's rows on both sides.
enum MigrateCommand {
    static let parser = ArgumentParser(
        command: "migrate", usage: "migrate --from PATH --to URI [--db-password-file F]",
        summary: """
            Copies a monitor's SQLite file into an empty PostgreSQL database: every event (with
            its sequence number and idempotency key), every activity, the counters behind
            /metrics, the learned content shapes, the push-to-start book and the channels, row by
            row, 5000 rows per transaction. Then it counts each table on both sides and prints
            the counts; it exits 1 if any differ. Stop the server first (it refuses a file a
            running server holds, and one a crashed server left: start and stop serve on it
            once), and start none on the URI before (it refuses a database a server leads on).
            Then start `serve --db URI`: /metrics and the API answer as before.
            """,
        options: [
            .init(name: "from", environment: nil, valueName: "PATH",
                  help: "The SQLite database file (required; the server on it stopped)."),
            .init(name: "to", environment: nil, valueName: "URI",
                  help: "The PostgreSQL database: postgres://user@host:port/db, empty (required; password from "
                      + "--db-password-file or PGPASSFILE/~/.pgpass, never in the URI)."),
            CommandLineTool.dbPasswordFileOption,
        ])

    static func run(_ args: [String], environment: [String: String]) throws -> Int32 {
        guard let parsed = try CommandLineTool.parse(parser, args, environment) else { return 0 }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        guard let path = parsed.values["from"] else { throw UsageError("--from is required (the SQLite file)") }
        guard let uri = parsed.values["to"] else { throw UsageError("--to is required (a postgres:// URI)") }
        guard PostgresStoreDatabase.isPostgresURI(uri) else {
            throw UsageError("--to must be a PostgreSQL URI (postgres://user@host:port/db), not '\(uri)'")
        }
        let password = try CommandLineTool.databasePassword(parsed, option: "to")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw UsageError("no database at \(path)")
        }
        guard !isDirectory.boolValue else { throw UsageError("--from names a directory, \(path): give the monitor's SQLite file") }

        // Held to the end: no server may start on the file while it is copied.
        let lock = try DatabaseFileLock(path: path)
        defer { lock.release() }
        let source = try Database(path: path)
        try SQLiteToPostgres.checkSource(source, path: path)
        // A server leading there loaded the empty tables: its next commit would overwrite the
        // copied counters with its own.
        let leaderLock = try CommandLineTool.takeLeaderLock(
            uri: uri, password: password,
            refusal: "migrate copies into a database no server uses (it would overwrite the copied counters "
                + "with its own): stop the servers on it, then migrate, then start them")
        defer { leaderLock.release() }
        let target = try PostgresStoreDatabase.open(uri: uri, password: password)
        try SQLiteToPostgres.checkTargetEmpty(target)

        var copier = SQLiteToPostgres(source: source, target: target)
        copier.progress = { CommandLineTool.printError("copying \($0)") }
        let counts = try copier.copy()
        print(report(counts), terminator: "")
        let differing = counts.filter { $0.source != $0.target }
        guard differing.isEmpty else {
            CommandLineTool.printError("error: the counts differ in \(differing.map(\.table).joined(separator: ", ")): "
                                       + "something else wrote to the PostgreSQL database; start again on an empty one")
            return 1
        }
        print("verified: every table holds as many rows in PostgreSQL as in \(path); serve with --db \(uri)")
        return 0
    }

    /// One line per table: its rows in the file and in PostgreSQL.
    static func report(_ counts: [SQLiteToPostgres.Count]) -> String {
        let width = counts.map(\.table.count).max() ?? 0
        func padded(_ text: String, _ n: Int, left: Bool = false) -> String {
            let pad = String(repeating: " ", count: max(0, n - text.count))
            return left ? text + pad : pad + text
        }
        var out = padded("table", width, left: true) + "      sqlite  postgresql\n"
        for c in counts {
            out += padded(c.table, width, left: true) + padded(String(c.source), 12) + padded(String(c.target), 12) + "\n"
        }
        return out
    }
}
