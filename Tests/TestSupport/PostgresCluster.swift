import Foundation
import PostgresDB
import Synchronization

/// A private, throwaway PostgreSQL cluster for tests: Debian's `initdb` and `pg_ctl` (from
/// `postgresql`, which `Tests/install-dependencies.sh test` installs) on a temporary directory,
/// listening on a Unix socket in that directory only (no TCP port to collide with other runs).
///
/// One per test process (`shared`), started at first use and stopped at exit; each test takes a
/// database of its own (`database()`). As root, the server runs as the `postgres` user (it
/// refuses root). Missing binaries are an error, never a skipped test.
///
/// For speed the cluster runs with `fsync = off`: a throwaway cluster has no crash to survive,
/// and the store's own settings (`synchronous_commit = on`) are still what it asks for.
public final class PostgresCluster: Sendable {
    public let directory: String
    public let socketDirectory: String
    public let port = 5432
    private let binaries: String
    private let runAs: [String]

    /// The process's cluster, started once.
    public static func shared() throws -> PostgresCluster {
        try started.get()
    }

    private static let started: Result<PostgresCluster, any Error> = Result {
        let cluster = try PostgresCluster()
        atexit { try? PostgresCluster.started.get().stop() }
        return cluster
    }

    /// A role that logs in only with `password` (scram-sha-256); every other role is trusted.
    public static let passwordUser = "lam_password_user"
    public static let password = "correct horse battery staple"

    /// A URI for a fresh database as `passwordUser` (created once; it owns the database).
    public static func passwordDatabase() throws -> String {
        try passwordUserCreated.get()
        let cluster = try shared()
        let name = try cluster.createDatabase().split(separator: "/").last!.split(separator: "?").first!
        let admin = try PostgresConnection(uri: cluster.uri(database: "postgres"))
        try admin.execute("ALTER DATABASE \(name) OWNER TO \(passwordUser)")
        return cluster.uri(database: String(name), user: passwordUser)
    }

    private static let passwordUserCreated: Result<Void, any Error> = Result {
        let admin = try PostgresConnection(uri: try shared().uri(database: "postgres"))
        // A role's password cannot be a parameter; this one is the constant above.
        try admin.execute("CREATE ROLE \(passwordUser) LOGIN PASSWORD '\(password)'")
    }

    /// A URI for a fresh database in the shared cluster (named for the caller, numbered).
    public static func database() throws -> String {
        try shared().createDatabase()
    }

    private static let databaseCount = Mutex(0)

    init() throws {
        binaries = try Self.findBinaries()
        directory = try TemporaryDirectory.make(prefix: "lam-pg-")
        socketDirectory = directory + "/socket"
        try FileManager.default.createDirectory(atPath: socketDirectory, withIntermediateDirectories: true)
        if getuid() == 0 {
            // PostgreSQL refuses to run as root: the directory becomes the postgres user's.
            try Self.run("/bin/chown", ["-R", "postgres:postgres", directory])
            runAs = ["/usr/sbin/runuser", "-u", "postgres", "--"]
        } else {
            runAs = []
        }
        do {
            try runTool("initdb", ["-D", directory + "/data", "-A", "trust", "-U", "postgres",
                                   "-E", "UTF8", "--locale=C", "--no-sync"])
            // One role must prove a password (`passwordUser`), so that tests can show one is sent.
            let hba = directory + "/data/pg_hba.conf"
            let rules = try String(contentsOfFile: hba, encoding: .utf8)
            try ("local all \(Self.passwordUser) scram-sha-256\n" + rules).write(toFile: hba, atomically: false, encoding: .utf8)
            let options = "-p \(port) -k \(socketDirectory) -c listen_addresses='' -c fsync=off "
                + "-c full_page_writes=off -c max_connections=300"
            try runTool("pg_ctl", ["start", "-w", "-t", "60", "-D", directory + "/data",
                                   "-l", directory + "/server.log", "-o", options])
        } catch {
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            stop()
            throw TestFailure("could not start a PostgreSQL cluster: \(error)\n\(log)")
        }
        startWatchdog()
    }

    /// The URI of `database` (a Unix socket, trust authentication, user `postgres` by default).
    public func uri(database: String, user: String = "postgres") -> String {
        let host = socketDirectory.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? socketDirectory
        return "postgres://\(user)@/\(database)?host=\(host)&port=\(port)"
    }

    /// Creates an empty database and returns its URI.
    public func createDatabase() throws -> String {
        let number = Self.databaseCount.withLock { n in n += 1; return n }
        let name = "lam_test_\(number)"
        let admin = try PostgresConnection(uri: uri(database: "postgres"))
        // A name cannot be a parameter; this one is built here from a number.
        try admin.execute("CREATE DATABASE \(name)")
        return uri(database: name)
    }

    /// Stops the server at once and deletes the directory.
    public func stop() {
        _ = try? runTool("pg_ctl", ["stop", "-D", directory + "/data", "-m", "immediate", "-w"])
        try? TemporaryDirectory.remove(directory)
    }

    /// A test process that crashes never runs `atexit`: a shell waits for it to be gone and
    /// then stops the cluster and deletes it.
    private func startWatchdog() {
        let stopCommand = (runAs + [binaries + "/pg_ctl", "stop", "-D", directory + "/data", "-m", "immediate"])
            .map { "'\($0)'" }.joined(separator: " ")
        let script = "while [ -d /proc/\(getpid()) ]; do sleep 1; done; [ -d '\(directory)' ] || exit 0; "
            + "\(stopCommand) >/dev/null 2>&1; rm -rf '\(directory)'"
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", script]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try? watchdog.run()
    }

    private func runTool(_ name: String, _ arguments: [String]) throws {
        let command = runAs + [binaries + "/" + name] + arguments
        try Self.run(command[0], Array(command.dropFirst()))
    }

    /// Runs a program to its end; throws with its output when it fails.
    ///
    /// `posix_spawn`, not Foundation's `Process`: `pg_ctl start` leaves a daemon that inherits
    /// what the child had, and `Process.waitUntilExit` then waits for the daemon's end (forever).
    /// Here the child gets /dev/null and an output file, and nothing waits for a descriptor to close.
    @discardableResult
    static func run(_ path: String, _ arguments: [String]) throws -> String {
        let output = NSTemporaryDirectory() + "lam-pg-output-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([path] + arguments).map { strdup($0) }
        defer { for arg in argv { free(arg) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv + [nil], environ)
        guard spawned == 0 else { throw TestFailure("could not start \(path): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        // Exited normally with 0 (the low 7 bits are the signal, the next 8 the exit code).
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw TestFailure("\(path) \(arguments.joined(separator: " ")) failed (wait status \(status)): \(text)")
        }
        return text
    }

    /// Debian's binaries of the newest installed major version.
    static func findBinaries() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted()
        for version in versions.reversed() {
            let bin = "\(root)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: bin + "/initdb"),
               FileManager.default.isExecutableFile(atPath: bin + "/pg_ctl") { return bin }
        }
        throw TestFailure("PostgreSQL's server binaries are missing (no \(root)/*/bin/initdb): "
                          + "run Tests/install-dependencies.sh test (Debian's postgresql)")
    }
}
