import Foundation
import Testing
import LiveActivityReporter
@testable import LiveActivityMonitor

/// The real monitor on port 0, with a real SQLite file in a fresh temporary directory and a
/// manual clock; read over real HTTP. Stopped and deleted by `stop()`.
final class LiveServer: Sendable {
    /// 2026-11-18T11:06:40Z: sample events happen just after it.
    static let base = 1_795_000_000.0

    let server: MonitorServer
    let directory: String
    let time: ManualTime
    private let client = URLSessionTransport()

    init(configure: (inout MonitorConfiguration) -> Void = { _ in }) throws {
        directory = NSTemporaryDirectory() + "lam-reporter-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let (clock, time) = Clock.manual(Self.base + 60)
        self.time = time
        var c = MonitorConfiguration()
        c.port = 0
        c.databasePath = directory + "/monitor.sqlite"
        c.webRoot = directory
        c.clock = clock
        configure(&c)
        server = try MonitorServer(c)
    }

    var url: URL { URL(string: server.baseURL)! }

    func stop() {
        server.stop()
        // The store's reader connections close when it is released, not in `stop()`; the last
        // one to close deletes the -wal and -shm files, sometimes while `removeItem` walks the
        // directory, which then fails on a file already gone and leaves the directory behind.
        // Try again; a directory that cannot be deleted is a failure, not a silent leftover.
        var failure: (any Error)?
        for _ in 0..<50 {
            do {
                try FileManager.default.removeItem(atPath: directory)
                return
            } catch {
                if !FileManager.default.fileExists(atPath: directory) { return }
                failure = error
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        Issue.record("could not delete \(directory): \(failure.map { String(describing: $0) } ?? "")")
    }

    func get(_ path: String) async throws -> TransportResponse {
        try await client.send(TransportRequest(url: URL(string: server.baseURL + path)!, method: "GET"))
    }

    func json(_ path: String) async throws -> JSONContent {
        try JSONDecoder().decode(JSONContent.self, from: try await get(path).body)
    }

    /// The value of one exact series line of /metrics, e.g. `liveactivity_ingest_duplicates_total`.
    func metric(_ series: String) async throws -> Double? {
        let text = String(decoding: try await get("/metrics").body, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    /// The stored events of a booking, by id, as the read API echoes them.
    func events(booking: String) async throws -> [String: [String: JSONContent]] {
        let answer = try await json("/api/bookings/" + booking)
        guard case .array(let events)? = answer.objectValue?["events"] else { return [:] }
        var byID: [String: [String: JSONContent]] = [:]
        for case .object(let event) in events {
            if let id = event["id"]?.stringValue { byID[id] = event }
        }
        return byID
    }
}
