import Foundation
import PostgresDB

/// Opens the PostgreSQL store's database: connects (the password, when given, from
/// `--db-password-file`, never from the URI on a command line), sets what the store's
/// guarantees need, and brings the schema up to date. Public for the benchmark's storage limit.
public enum PostgresStoreDatabase {
    /// Whether `--db` names a PostgreSQL database rather than an SQLite file.
    static func isPostgresURI(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Whether the URI carries a password (`user:secret@host`, or a `password=` parameter).
    static func uriHasPassword(_ uri: String) -> Bool {
        guard let scheme = uri.range(of: "://") else { return false }
        let rest = uri[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        if let at = authority.lastIndex(of: "@"), authority[..<at].contains(":") { return true }
        guard let query = rest.firstIndex(of: "?") else { return false }
        return rest[rest.index(after: query)...].split(separator: "&").contains { $0.lowercased().hasPrefix("password=") }
    }

    public static func open(uri: String, password: String? = nil) throws -> PostgresConnection {
        let db = try connect(uri: uri, password: password)
        // An answer only after the commit is on the server's disk (the server default, made
        // explicit: a database configured otherwise must not weaken the ingest contract).
        try db.execute("SET synchronous_commit = on")
        // Times are Unix seconds in float8 columns; nothing depends on the session's zone.
        try db.execute("SET TIME ZONE 'UTC'")
        try db.migrate(PostgresSchema.migrations)
        return db
    }

    /// A connection whose death either end notices within about 11 s (5 s idle, then 3 probes
    /// 2 s apart), over TCP: libpq's keepalives so that this process sees a vanished server,
    /// and the server's (given as startup `options`, so that a reconnect keeps them) so that the
    /// server ends the session of a vanished machine, releasing its leader lock and any row it
    /// holds (`LeaderLock`, `LeaderEpoch`). Both are ignored over a Unix socket. Parameters the
    /// URI sets itself win over these.
    static func connect(uri: String, password: String?, applicationName: String = "live-activity-monitor") throws -> PostgresConnection {
        try PostgresConnection(uri: uri, password: password, defaults: [
            ("application_name", applicationName), ("keepalives", "1"), ("keepalives_idle", "5"),
            ("keepalives_interval", "2"), ("keepalives_count", "3"),
            ("options", "-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=3"),
        ])
    }

    /// The password in `path`: its first line, without surrounding white space. Read once at start.
    static func password(fromFile path: String) throws -> String {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let first = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return first.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
