import Foundation
import HTTPServer
@testable import LiveActivityMonitor

/// `InProcessMonitor` over the PostgreSQL store: the router `buildPostgresMonitor` builds, on a
/// fresh database of the test process's private cluster (`PostgresCluster`), on a manual clock.
final class PostgresInProcessMonitor {
    let uri: String
    let time: ManualTime
    let configuration: MonitorConfiguration
    let monitor: Monitor<PostgresEventStore>
    private var stopped = false

    /// - Parameter epoch: the leader epoch its commits check (`LeaderEpoch`); none when nil.
    init(now: Double = TestServer.base, uri: String? = nil, epoch: Int64? = nil,
         configure: (inout MonitorConfiguration) -> Void = { _ in }) throws {
        let uri = try uri ?? PostgresCluster.database()
        self.uri = uri
        let (clock, time) = Clock.manual(now)
        self.time = time
        var c = MonitorConfiguration.forTesting(directory: NSTemporaryDirectory(), clock: clock)
        configure(&c)
        c.databasePath = uri
        configuration = c
        monitor = try buildPostgresMonitor(c, epoch: epoch)
    }

    deinit {
        if !stopped { monitor.store.close() }
    }

    var store: PostgresEventStore { monitor.store }

    /// Closes the store; the database stays (the cluster is thrown away at the end of the run).
    func stop() {
        stopped = true
        monitor.store.close()
    }

    func handle(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) -> HTTPResponse {
        monitor.handle(InProcessMonitor.request(method, target, headers: headers, body: body))
    }
}

func withPostgresInProcessMonitor<R>(now: Double = TestServer.base, configure: (inout MonitorConfiguration) -> Void = { _ in },
                                     _ body: (PostgresInProcessMonitor) throws -> R) throws -> R {
    let monitor = try PostgresInProcessMonitor(now: now, configure: configure)
    defer { monitor.stop() }
    return try body(monitor)
}
