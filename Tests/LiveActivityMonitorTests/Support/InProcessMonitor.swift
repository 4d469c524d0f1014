import Foundation
import HTTPServer
@testable import LiveActivityMonitor

/// The monitor `buildMonitor` builds (router, handlers, registry) over a real SQLite store in a
/// fresh temporary directory, on a manual clock, called in process: no socket, no HTTP parsing,
/// no libmicrohttpd thread. The in-process test tier; `TestServer` is the live one.
///
/// It answers as the live server's router does; what only the HTTP layer does is absent: the
/// security headers and `Content-Length` it adds, the 413 and 415 it answers before a handler
/// runs, keep-alive and framing. Those stay in the live tests.
///
/// Clean-up as `TestServer`'s: `stopAndRemove()` closes the store and removes the directory;
/// what was not stopped is when the object goes away (reported on standard error if the
/// directory cannot be removed, where `stopAndRemove` throws).
final class InProcessMonitor {
    let directory: String
    let time: ManualTime
    let configuration: MonitorConfiguration
    let monitor: Monitor<EventStore>
    private var stopped = false

    init(now: Double = TestServer.base, configure: (inout MonitorConfiguration) -> Void = { _ in }) throws {
        let directory = try TemporaryDirectory.make()
        self.directory = directory
        let (clock, time) = Clock.manual(now)
        self.time = time
        var c = MonitorConfiguration.forTesting(directory: directory, clock: clock)
        configure(&c)
        configuration = c
        do {
            monitor = try buildMonitor(c)
        } catch {
            Self.report { try TemporaryDirectory.remove(directory) }
            throw error
        }
    }

    deinit {
        if !stopped { Self.report { try stopAndRemove() } }
    }

    var store: EventStore { monitor.store }

    /// Closes the store (its writer commits what it holds) and removes the directory.
    func stopAndRemove() throws {
        stopped = true
        monitor.store.close()
        try TemporaryDirectory.remove(directory)
    }

    private static func report(_ body: () throws -> Void) {
        do { try body() } catch {
            FileHandle.standardError.write(Data("InProcessMonitor: \(error)\n".utf8))
        }
    }

    /// Answers `method target` (a path, perhaps with `?query`) as the router answers it.
    func handle(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) -> HTTPResponse {
        monitor.handle(Self.request(method, target, headers: headers, body: body))
    }

    /// The request libmicrohttpd would hand the router: the path as sent (still percent-encoded),
    /// the query decoded (`+` a space, `%XX` its byte), a loopback `Host` unless one is given.
    static func request(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]) -> HTTPRequest {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if parts.count == 2 {
            for argument in parts[1].split(separator: "&") {
                let pair = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query[decode(pair[0])] = pair.count == 2 ? decode(pair[1]) : ""
            }
        }
        var fields = Dictionary(headers, uniquingKeysWith: { $0 + ", " + $1 })
        if !fields.keys.contains(where: { $0.lowercased() == "host" }) { fields["Host"] = "127.0.0.1" }
        return HTTPRequest(method: method, path: String(parts[0]), query: query, headers: fields, body: body,
                           remoteAddress: "127.0.0.1")
    }

    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}

/// Runs `body` with an in-process monitor, then closes its store and removes its directory,
/// whether `body` returned or threw; throws if the directory cannot be removed.
func withInProcessMonitor<R>(now: Double = TestServer.base, configure: (inout MonitorConfiguration) -> Void = { _ in },
                             _ body: (InProcessMonitor) throws -> R) throws -> R {
    let monitor = try InProcessMonitor(now: now, configure: configure)
    let result = Result { try body(monitor) }
    try monitor.stopAndRemove()
    return try result.get()
}
