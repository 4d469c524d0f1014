import Foundation
import HTTPServer
import LiveActivityMonitor

/// Our HTTP layer alone: our `HTTPServer` with the monitor's own settings (polling threads,
/// connection limit, timeout, body cap and default headers), answering every request with a
/// fixed 200 where it arrives (as the monitor answers its quick reads) and doing nothing else.
/// Measured against libmicrohttpd alone (`LibraryBaseline`): the difference is our layer's cost.
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
        configuration.threadPoolSize = monitor.httpThreads
        configuration.connectionTimeoutSeconds = monitor.connectionTimeoutSeconds
        configuration.defaultHeaders = MonitorServer.securityHeaders
        let server: HTTPServer
        do {
            server = try HTTPServer(configuration: configuration, answering: { _, responder in
                responder.respond(HTTPResponse(status: 200, headers: [(name: "Content-Type", value: "application/json")], body: body))
            })
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
