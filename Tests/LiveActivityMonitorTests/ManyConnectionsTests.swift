import Dispatch
import Foundation
import Glibc
import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// Thousands of idle keep-alive connections cost no thread: the real binary (its memory and
/// descriptors its own) holds 10,000 of them open while 64 other clients post events; nothing
/// fails, the idle ones are still served afterwards, and the memory they took is printed.
@Suite struct ManyConnectionsTests {
    static let idle = 10_000

    /// Raises this process's soft limit on open files toward `wanted`; the limit reached.
    static func raiseOpenFiles(to wanted: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < rlim_t(wanted) {
            limit.rlim_cur = min(limit.rlim_max, rlim_t(wanted))
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(limit.rlim_cur)
    }

    @Test func tenThousandIdleConnectionsWhile64ClientsPost() throws {
        let reachable = Self.raiseOpenFiles(to: Self.idle + 1_024)
        try #require(reachable >= Self.idle + 512, "ulimit -n allows \(reachable) open files here: \(Self.idle) connections need more")
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let serve = try ServeProcess(["--db", dir + "/db.sqlite", "--max-connections", String(Self.idle + 200),
                                      "--connection-timeout", "120"])
        defer { _ = serve.stop() }
        _ = try HTTPClient(port: serve.port).request("GET", "/metrics")
        let before = serve.memory().resident

        var idle: [RawConnection] = []
        idle.reserveCapacity(Self.idle)
        for _ in 0..<Self.idle { idle.append(try RawConnection(port: serve.port, receiveTimeout: 10)) }
        // Every 500th proves its connection accepted and served, and stays open (keep-alive).
        for i in stride(from: 0, to: Self.idle, by: 500) {
            #expect(try idle[i].get("/-/healthy").status == 200)
        }
        let withIdle = serve.memory().resident

        let failures = Locked<[String]>([])
        let accepted = Locked(0)
        let port = serve.port
        let group = DispatchGroup()
        for client in 0..<64 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let http = HTTPClient(port: port, timeoutSeconds: 10)
                defer { http.close() }
                for n in 0..<10 {
                    let event = JSONValue(["id": "c\(client)-\(n)", "type": "activity.started", "activity_id": "c\(client)-\(n)",
                                           "booking_id": "BK-\(client)", "attributes_type": "LiveActivityAttributes",
                                           "occurred_at": Date().timeIntervalSince1970 - 5, "content_state": ["step": n]]
                                          as [String: Any])
                    do {
                        let response = try http.request("POST", "/v1/events", headers: [("Content-Type", "application/json")],
                                                        body: Array(event.jsonString.utf8))
                        if response.status == 200 { accepted.withLock { $0 += 1 } } else {
                            failures.withLock { $0.append("\(response.status) \(response.text)") }
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success, "64 posting clients did not finish")
        #expect(failures.value.isEmpty, "\(failures.value.prefix(5))")
        #expect(accepted.value == 640)
        for i in stride(from: 250, to: Self.idle, by: 500) {
            #expect(try idle[i].get("/-/healthy").status == 200, "an idle connection was lost")
        }
        print("\(Self.idle) idle connections: server resident memory \(before / 1_000_000) MB → \(withIdle / 1_000_000) MB "
              + "(\((withIdle - before) / Self.idle) bytes each); 64 clients posted 640 events meanwhile")
        #expect(withIdle - before < Self.idle * 64 << 10, "more than a connection's whole memory pool each")
        idle.removeAll()
        let stopped = serve.stop()
        #expect(stopped.status == 0, "\(stopped.log.suffix(2000))")
    }
}
