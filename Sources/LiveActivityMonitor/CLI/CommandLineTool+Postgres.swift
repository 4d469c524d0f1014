/// `--db` as a PostgreSQL URI (`serve` only) and its password, which never comes from the
/// command line: `--db-password-file`, or libpq's own PGPASSFILE / `~/.pgpass`.
extension CommandLineTool {
    static let serveDBOption = ArgumentParser.Option(
        name: "db", environment: "LAM_DB", valueName: "PATH|URI",
        help: "SQLite database file (default ./live-activities.sqlite), or PostgreSQL: postgres://user@host:port/db "
            + "(password from --db-password-file or PGPASSFILE/~/.pgpass, never in the URI).")
    static let dbPasswordFileOption = ArgumentParser.Option(
        name: "db-password-file", environment: "LAM_DB_PASSWORD_FILE", valueName: "F",
        help: "File whose first line is the PostgreSQL password (read once at start).")

    /// The PostgreSQL password from `--db-password-file`, or nil (libpq then looks in PGPASSFILE
    /// and ~/.pgpass). Refuses a password written into the URI itself. `option` names the URI's
    /// flag (`--db`; `migrate --to`).
    static func databasePassword(_ parsed: ArgumentParser.Parsed, option: String = "db") throws -> String? {
        let db = parsed.values[option] ?? ""
        if PostgresStoreDatabase.isPostgresURI(db), PostgresStoreDatabase.uriHasPassword(db) {
            throw UsageError("\(parsed.source(option)) must not hold a password: "
                             + "give it with --db-password-file (or PGPASSFILE / ~/.pgpass)")
        }
        guard let file = parsed.values["db-password-file"] else { return nil }
        guard PostgresStoreDatabase.isPostgresURI(db) else {
            throw UsageError("\(parsed.source("db-password-file")) is for a PostgreSQL --\(option) (postgres://…)")
        }
        do { return try PostgresStoreDatabase.password(fromFile: file) } catch {
            throw UsageError("cannot read \(parsed.source("db-password-file")) \(file): \(error.localizedDescription)")
        }
    }

    /// `--db` for the commands that work on an SQLite file only (`history`, `import`, `prune`).
    static func sqliteDatabasePath(_ parsed: ArgumentParser.Parsed, command: String) throws -> String {
        let path = parsed.values["db"] ?? MonitorConfiguration().databasePath
        guard !PostgresStoreDatabase.isPostgresURI(path) else {
            throw UsageError("`\(command)` works on an SQLite file; \(parsed.source("db")) names a PostgreSQL database")
        }
        return path
    }
}
