import Foundation
import HTTPServer
import JSON
import LiveActivityMonitor

/// The real server (`MonitorServer`: the monitor bound to a socket) on port 0, with a real
/// SQLite file in a fresh temporary directory and a manual clock, plus a keep-alive client:
/// the live test tier.
///
/// Clean-up: the object owns the server and the directory. `stop()` stops the server and
/// removes the directory (`stop(keepFiles: true)` hands the files to the caller); whatever
/// was not stopped is stopped and removed when the object goes away, so a test that throws
/// before its `defer`, or forgets it, leaves no server running and no directory behind. A
/// failed start removes the directory it made. Prefer `withTestServer`, which also fails the
/// test (by throwing) if the directory cannot be removed; `stop()` and `deinit` cannot throw,
/// and report such a leftover on standard error.
public final class TestServer {
    /// 2026-11-18T11:06:40Z: vector times are relative to it.
    public static let base = 1_795_000_000.0

    public let directory: String
    public let time: ManualTime
    public private(set) var server: MonitorServer
    public private(set) var client: HTTPClient
    public var configuration: MonitorConfiguration
    /// Set once stopped: by `stop` (and the directory removed or handed over) or by `deinit`.
    private var stopped = false

    /// Starts a server on a database in `directory` (a fresh one when nil), at `now` on a manual
    /// clock; `configure` changes the configuration first (the database path is already set).
    public init(now: Double = TestServer.base, directory: String? = nil,
                configure: (inout MonitorConfiguration) -> Void = { _ in }) throws {
        let made = directory == nil
        let directory = try directory ?? TemporaryDirectory.make()
        self.directory = directory
        let (clock, time) = Clock.manual(now)
        self.time = time
        var c = MonitorConfiguration.forTesting(directory: directory, clock: clock)
        configure(&c)
        configuration = c
        do {
            server = try MonitorServer(c)
        } catch {
            if made { Self.report { try TemporaryDirectory.remove(directory) } }
            throw error
        }
        client = HTTPClient(port: server.port)
    }

    deinit {
        if !stopped { stop() }
    }

    /// A fresh temporary directory; the caller removes it (or hands it to a `TestServer`).
    public static func makeTemporaryDirectory() -> String {
        do {
            return try TemporaryDirectory.make()
        } catch {
            fatalError("cannot create a temporary directory: \(error)")
        }
    }

    public static var repositoryRoot: String { Repository.root }

    /// How many widget templates `Web/templates/index.json` lists: their types reserve label
    /// slots and declare content shapes in every test server.
    public static var templateCount: Int {
        let url = URL(fileURLWithPath: Repository.root + "/Web/templates/index.json")
        guard let data = try? Data(contentsOf: url),
              let index = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let templates = index["templates"] as? [Any] else { fatalError("Web/templates/index.json does not read") }
        return templates.count
    }

    /// Stops and starts again on the same database file (and the same clock).
    public func restart() throws {
        client.close()
        server.stop()
        server = try MonitorServer(configuration)
        client = HTTPClient(port: server.port)
    }

    /// Stops the server (once) and removes the directory, or with `keepFiles` leaves it to the
    /// caller. A later `stop()` still removes it. A directory that cannot be removed is
    /// reported on standard error (`stopAndRemove` throws instead).
    public func stop(keepFiles: Bool = false) {
        if keepFiles {
            halt()
        } else {
            Self.report { try stopAndRemove() }
        }
    }

    /// Stops the server and removes the directory; throws if the directory cannot be removed.
    public func stopAndRemove() throws {
        halt()
        try TemporaryDirectory.remove(directory)
    }

    private func halt() {
        stopped = true
        client.close()
        server.stop()  // idempotent
    }

    private static func report(_ body: () throws -> Void) {
        do { try body() } catch {
            FileHandle.standardError.write(Data("TestServer: \(error)\n".utf8))
        }
    }

    @discardableResult
    public func post(_ body: String, contentType: String = "application/json", token: String? = nil) throws -> HTTPClient.Response {
        var headers = [("Content-Type", contentType)]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return try client.request("POST", "/v1/events", headers: headers, body: Array(body.utf8))
    }

    public func post(events: [JSONValue], token: String? = nil) throws -> HTTPClient.Response {
        try post(JSONValue.array(events).jsonString, token: token)
    }

    public func get(_ path: String, token: String? = nil) throws -> HTTPClient.Response {
        try client.request("GET", path, headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    public func json(_ path: String, token: String? = nil) throws -> JSONValue {
        let response = try get(path, token: token)
        return try JSONParser.parse(response.body)
    }

    /// The value of one exact series line in /metrics, e.g. `liveactivity_activities{attributes_type="X",state="active"}`.
    public func metric(_ series: String) throws -> Double? {
        MetricsText.value(of: series, in: try get("/metrics").text)
    }
}

/// Runs `body` with a live server (`TestServer`), then stops it and removes its directory,
/// whether `body` returned or threw; throws if the directory cannot be removed.
public func withTestServer<R>(now: Double = TestServer.base, configure: (inout MonitorConfiguration) -> Void = { _ in },
                              _ body: (TestServer) throws -> R) throws -> R {
    let server = try TestServer(now: now, configure: configure)
    let result = Result { try body(server) }
    try server.stopAndRemove()
    return try result.get()
}

extension MonitorConfiguration {
    /// A test's monitor: its database in `directory`, the repository's `Web/`, a free port,
    /// `clock` (a manual one, usually). Shared by both tiers.
    public static func forTesting(directory: String, clock: Clock) -> MonitorConfiguration {
        var c = MonitorConfiguration()
        c.port = 0
        c.databasePath = directory + "/monitor.sqlite"
        c.webRoot = Repository.root + "/Web"
        c.clock = clock
        return c
    }
}
