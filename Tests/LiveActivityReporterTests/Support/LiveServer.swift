import Foundation
import Testing
import LiveActivityReporter
@testable import LiveActivityMonitor

/// The shared live fixture (`TestServer`: the real monitor on port 0, a real SQLite file in a
/// fresh temporary directory, a manual clock, and its clean-up), read here with the reporter's
/// own transport (URLSession) rather than the fixture's blocking client.
final class LiveServer {
    /// 2026-11-18T11:06:40Z: sample events happen just after it.
    static let base = TestServer.base

    private let fixture: TestServer
    private let client = URLSessionTransport()

    init(configure: (inout MonitorConfiguration) -> Void = { _ in }) throws {
        fixture = try TestServer(now: Self.base + 60) { c in
            // No dashboard: the temporary directory is the web root, so no template reserves a type.
            c.webRoot = (c.databasePath as NSString).deletingLastPathComponent
            configure(&c)
        }
    }

    var server: MonitorServer { fixture.server }
    var directory: String { fixture.directory }
    var time: ManualTime { fixture.time }
    var url: URL { URL(string: server.baseURL)! }

    /// Stops the server and removes its directory; a directory that cannot be removed fails the test.
    func stop() {
        do { try fixture.stopAndRemove() } catch { Issue.record(error) }
    }

    func get(_ path: String) async throws -> TransportResponse {
        try await client.send(TransportRequest(url: URL(string: server.baseURL + path)!, method: "GET"))
    }

    func json(_ path: String) async throws -> JSONContent {
        try JSONDecoder().decode(JSONContent.self, from: try await get(path).body)
    }

    /// The value of one exact series line of /metrics, e.g. `liveactivity_ingest_duplicates_total`.
    func metric(_ series: String) async throws -> Double? {
        MetricsText.value(of: series, in: String(decoding: try await get("/metrics").body, as: UTF8.self))
    }

    /// The stored events of a booking, by id, as the read API echoes them.
    func events(booking: String) async throws -> [String: [String: JSONContent]] {
        Self.byID(try await json("/api/bookings/" + Self.pathSegment(booking)))
    }

    /// The stored events of a channel (its management results and broadcasts), by id.
    func events(channel: String) async throws -> [String: [String: JSONContent]] {
        Self.byID(try await json("/api/channels/" + Self.pathSegment(channel)))
    }

    /// `id` as one path segment: a channel id is base64, whose "/" and "+" must not split or change it.
    static func pathSegment(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? id
    }

    private static func byID(_ answer: JSONContent) -> [String: [String: JSONContent]] {
        guard case .array(let events)? = answer.objectValue?["events"] else { return [:] }
        var byID: [String: [String: JSONContent]] = [:]
        for case .object(let event) in events {
            if let id = event["id"]?.stringValue { byID[id] = event }
        }
        return byID
    }
}
