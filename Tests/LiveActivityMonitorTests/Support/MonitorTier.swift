import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// Where a test reaches the monitor: in process through `buildMonitor`'s router (no socket:
/// milliseconds), or over HTTP to the real server on port 0. A test written against
/// `TestedMonitor` runs the same assertions in both (`@Test(arguments: MonitorTier.allCases, …)`).
enum MonitorTier: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inProcess = "in process"
    case http = "over HTTP"
    /// In process, over the PostgreSQL store (a database of the private test cluster).
    case postgres = "in process on PostgreSQL"
    /// Over HTTP to the real server with `--db postgres://…` (what `serve` runs).
    case httpPostgres = "over HTTP on PostgreSQL"

    var testDescription: String { rawValue }

    /// Runs `body` against a fresh monitor of this tier: a real SQLite file in a temporary
    /// directory, a manual clock at `now`, `configure` applied. Stopped and its directory
    /// removed afterwards, whether `body` returned or threw.
    func run<R>(now: Double = TestServer.base, configure: (inout MonitorConfiguration) -> Void = { _ in },
                _ body: (TestedMonitor) throws -> R) throws -> R {
        switch self {
        case .inProcess:
            return try withInProcessMonitor(now: now, configure: configure) { try body(TestedMonitor($0)) }
        case .http:
            return try withTestServer(now: now, configure: configure) { try body(TestedMonitor($0)) }
        case .postgres:
            return try withPostgresInProcessMonitor(now: now, configure: configure) { try body(TestedMonitor($0)) }
        case .httpPostgres:
            let uri = try PostgresCluster.database()
            return try withTestServer(now: now, configure: { c in configure(&c); c.databasePath = uri }) {
                try body(TestedMonitor($0))
            }
        }
    }
}

/// A monitor under test, the same to a test in either tier: requests in, answers out, its clock.
struct TestedMonitor {
    /// An answer, whichever way it came: header names lowercased.
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    let tier: MonitorTier
    let time: ManualTime
    /// The SQLite store, in the tiers that have one.
    let store: EventStore?
    private let send: (_ method: String, _ target: String, _ headers: [(String, String)], _ body: [UInt8]) throws -> Answer

    init(_ monitor: InProcessMonitor) {
        tier = .inProcess
        time = monitor.time
        store = monitor.store
        send = { method, target, headers, body in
            let r = monitor.handle(method, target, headers: headers, body: body)
            return Answer(status: r.status, headers: Dictionary(r.headers.map { ($0.name.lowercased(), $0.value) },
                                                                uniquingKeysWith: { $0 + ", " + $1 }),
                          body: r.body)
        }
    }

    init(_ monitor: PostgresInProcessMonitor) {
        tier = .postgres
        time = monitor.time
        store = nil
        send = { method, target, headers, body in
            let r = monitor.handle(method, target, headers: headers, body: body)
            return Answer(status: r.status, headers: Dictionary(r.headers.map { ($0.name.lowercased(), $0.value) },
                                                                uniquingKeysWith: { $0 + ", " + $1 }),
                          body: r.body)
        }
    }

    init(_ server: TestServer) {
        let postgres = PostgresStoreDatabase.isPostgresURI(server.configuration.databasePath)
        tier = postgres ? .httpPostgres : .http
        time = server.time
        store = postgres ? nil : server.server.store
        send = { method, target, headers, body in
            let r = try server.client.request(method, target, headers: headers, body: body)
            return Answer(status: r.status, headers: r.headers, body: r.body)
        }
    }

    func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> Answer {
        try send(method, target, headers, body)
    }

    @discardableResult
    func post(_ body: String, contentType: String = "application/json", token: String? = nil) throws -> Answer {
        var headers = [("Content-Type", contentType)]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return try request("POST", "/v1/events", headers: headers, body: Array(body.utf8))
    }

    @discardableResult
    func post(events: [JSONValue], token: String? = nil) throws -> Answer {
        try post(JSONValue.array(events).jsonString, token: token)
    }

    func get(_ target: String, token: String? = nil) throws -> Answer {
        try request("GET", target, headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    func json(_ target: String, token: String? = nil) throws -> JSONValue {
        try JSONParser.parse(try get(target, token: token).body)
    }

    /// The value of one exact series line of /metrics.
    func metric(_ series: String) throws -> Double? {
        MetricsText.value(of: series, in: try get("/metrics").text)
    }
}
