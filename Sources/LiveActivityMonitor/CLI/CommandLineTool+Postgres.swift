import Foundation
import PostgresDB

/// `--db` as an SQLite file or a PostgreSQL URI (every command) and its password, which never comes from the
/// command line: `--db-password-file`, or libpq's own PGPASSFILE / `~/.pgpass`.
extension CommandLineTool {
    static let dbOption = ArgumentParser.Option(
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

    /// Where `--db` keeps the monitor: an SQLite file, or a PostgreSQL database and its password.
    enum DatabaseLocation {
        case sqlite(path: String)
        case postgres(uri: String, password: String?)
    }

    /// `--db`'s value: a PostgreSQL URI, or the path of an SQLite file (which need not exist yet;
    /// an empty path or a directory is a usage error, not an I/O error from SQLite).
    static func database(_ parsed: ArgumentParser.Parsed) throws -> String {
        let db = parsed.values["db"] ?? MonitorConfiguration().databasePath
        let example = "a file such as ./live-activities.sqlite, or postgres://user@host:port/db"
        guard !db.isEmpty else { throw UsageError("\(parsed.source("db")) must not be empty: \(example)") }
        var isDirectory: ObjCBool = false
        if !PostgresStoreDatabase.isPostgresURI(db), FileManager.default.fileExists(atPath: db, isDirectory: &isDirectory),
           isDirectory.boolValue {
            throw UsageError("\(parsed.source("db")) names a directory, \(db): give \(example)")
        }
        return db
    }

    /// `--db` (and `--db-password-file`) of `history`, `import` and `prune`.
    static func databaseLocation(_ parsed: ArgumentParser.Parsed) throws -> DatabaseLocation {
        let db = try database(parsed)
        let password = try databasePassword(parsed)
        return PostgresStoreDatabase.isPostgresURI(db) ? .postgres(uri: db, password: password) : .sqlite(path: db)
    }

    /// A server leads on the PostgreSQL database: a command that writes there beside it would
    /// have its counters overwritten by the server's, which it keeps in memory.
    struct ServerLeads: Error, CustomStringConvertible {
        let uri: String
        let refusal: String
        var description: String { "a live-activity-monitor server leads on \(uri) (it holds the leader lock); \(refusal)" }
    }

    /// For the commands that write a monitor's PostgreSQL database without serving it (`import`,
    /// `migrate`): the leader lock, or `ServerLeads` while a server holds it. Held to the
    /// command's end, it keeps a server started meanwhile standing by; that one then leads from
    /// the tables, with what the command wrote.
    static func takeLeaderLock(uri: String, password: String?, refusal: String) throws -> LeaderLock {
        let lock = LeaderLock(uri: uri, password: password)
        guard try lock.tryTake() else { throw ServerLeads(uri: uri, refusal: refusal) }
        return lock
    }

    /// For the commands that use a monitor's PostgreSQL database without migrating it (`history`,
    /// `prune`): connects and refuses a database of another program or of another version, as
    /// they refuse such an SQLite file (exit status 1: the database, not the command line, is wrong).
    static func existingPostgresDatabase(uri: String, password: String?) throws -> PostgresConnection {
        let db = try PostgresConnection(uri: uri, password: password)
        try db.execute("SET TIME ZONE 'UTC'")
        let pending = try db.pendingMigrations(PostgresSchema.migrations)
        guard try db.schemaVersion() > 0 else { throw Schema.NotAMonitorDatabase(path: uri) }
        guard pending == 0 else { throw Schema.OlderVersion(path: uri) }
        return db
    }
}
