import Foundation
import HTTPServer
import JSON
@testable import LiveActivityMonitor

/// The real server on port 0 with a real SQLite file in a fresh temporary directory and a
/// manual clock, plus a keep-alive client. Stopped and deleted by `stop()`.
final class TestServer {
    static let base = 1_795_000_000.0   // 2026-11-18T11:06:40Z: vector times are relative to it

    let directory: String
    let time: ManualTime
    private(set) var server: MonitorServer
    private(set) var client: HTTPClient
    var configuration: MonitorConfiguration

    init(now: Double = TestServer.base, directory: String? = nil,
         configure: (inout MonitorConfiguration) -> Void = { _ in }) throws {
        self.directory = directory ?? TestServer.makeTemporaryDirectory()
        let (clock, time) = Clock.manual(now)
        self.time = time
        var c = MonitorConfiguration()
        c.port = 0
        c.databasePath = self.directory + "/monitor.sqlite"
        c.webRoot = TestServer.repositoryRoot + "/Web"
        c.clock = clock
        configure(&c)
        configuration = c
        server = try MonitorServer(c)
        client = HTTPClient(port: server.port)
    }

    static func makeTemporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "lam-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static var repositoryRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// Stops and starts again on the same database file (and the same clock).
    func restart() throws {
        client.close()
        server.stop()
        server = try MonitorServer(configuration)
        client = HTTPClient(port: server.port)
    }

    func stop(keepFiles: Bool = false) {
        client.close()
        server.stop()
        if !keepFiles { try? FileManager.default.removeItem(atPath: directory) }
    }

    @discardableResult
    func post(_ body: String, contentType: String = "application/json", token: String? = nil) throws -> HTTPClient.Response {
        var headers = [("Content-Type", contentType)]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return try client.request("POST", "/v1/events", headers: headers, body: Array(body.utf8))
    }

    func post(events: [JSONValue], token: String? = nil) throws -> HTTPClient.Response {
        try post(JSONValue.array(events).jsonString, token: token)
    }

    func get(_ path: String, token: String? = nil) throws -> HTTPClient.Response {
        try client.request("GET", path, headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    func json(_ path: String, token: String? = nil) throws -> JSONValue {
        let response = try get(path, token: token)
        return try JSONParser.parse(response.body)
    }

    /// The value of one exact series line in /metrics, e.g. `liveactivity_activities{attributes_type="X",state="active"}`.
    func metric(_ series: String) throws -> Double? {
        MetricsText.value(of: series, in: try get("/metrics").text)
    }
}

enum MetricsText {
    static func value(of series: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    /// The exposition without the families that describe the process or its timing rather than
    /// the stored data.
    static func dataOnly(_ text: String, keepHTTP: Bool = true) -> String {
        let volatile = ["process_", "liveactivity_store_commit_seconds", "liveactivity_store_size_bytes"]
            + (keepHTTP ? [] : ["liveactivity_http_requests_total"])
        return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            let name = line.hasPrefix("# ") ? String(line.split(separator: " ").dropFirst(2).first ?? "") : String(line)
            return !volatile.contains { name.hasPrefix($0) }
        }.joined(separator: "\n")
    }
}

/// Builds JSON values tersely in tests.
extension JSONValue {
    init(_ any: Any) {
        switch any {
        case let v as JSONValue: self = v
        case let s as String: self = .string(s)
        case let b as Bool: self = .bool(b)
        case let i as Int: self = .number(JSONNumber(Int64(i)))
        case let d as Double: self = .number(JSONNumber(d))
        case let a as [Any]: self = .array(a.map(JSONValue.init))
        case let o as KeyValuePairs<String, Any>: self = .object(JSONObject(o.map { ($0.key, JSONValue($0.value)) }))
        case let o as [String: Any]: self = .object(JSONObject(o.sorted { $0.key < $1.key }.map { ($0.key, JSONValue($0.value)) }))
        default: self = .null
        }
    }
}
