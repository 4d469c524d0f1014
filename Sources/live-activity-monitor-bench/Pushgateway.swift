import Foundation

/// The peer: Debian's Prometheus Pushgateway, in memory (no `--persistence.file`: it then
/// writes nothing to disk, so it acknowledges pushes that a crash would lose).
enum Pushgateway {
    static let path = "/usr/bin/prometheus-pushgateway"

    static func start() throws -> ChildProcess {
        let port = try FreePort.pick()
        return try ChildProcess.external("pushgateway", executable: path,
                                         arguments: ["--web.listen-address=127.0.0.1:\(port)", "--log.level=warn"],
                                         port: port, readyPath: "/-/ready")
    }
}
