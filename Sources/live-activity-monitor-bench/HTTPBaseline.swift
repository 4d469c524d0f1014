import Foundation
import HTTPServer
import LiveActivityMonitor

/// The HTTP limit: our `HTTPServer` with the monitor's own settings (thread per connection,
/// same connection limit, timeout, body cap and default headers), answering every request
/// with a fixed 200 and doing nothing else. Whatever our server does beyond this costs time.
enum HTTPBaseline {
    static let body = Array("{\"accepted\":1,\"duplicates\":0}".utf8)

    /// Serves on a free port until SIGTERM; logs the port like `serve` does.
    static func run() -> Int32 {
        let signals = TerminationSignals()
        let monitor = MonitorConfiguration()
        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.maxBodyBytes = monitor.maxBodyBytes
        configuration.maxConnections = monitor.maxConnections
        configuration.connectionTimeoutSeconds = monitor.connectionTimeoutSeconds
        configuration.defaultHeaders = MonitorServer.securityHeaders
        let server: HTTPServer
        do {
            server = try HTTPServer(configuration: configuration) { _ in
                HTTPResponse(status: 200, headers: [(name: "Content-Type", value: "application/json")], body: body)
            }
        } catch {
            FileHandle.standardError.write(Data("http-baseline: \(error)\n".utf8))
            return 1
        }
        FileHandle.standardError.write(Data("http-baseline listening on http://127.0.0.1:\(server.port)\n".utf8))
        signals.wait()
        server.stop()
        return 0
    }
}
