import Dispatch
import Foundation
import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// Stopping and closing: each may be called twice, or from two threads at once, and every caller
/// returns once the thing is stopped (never hangs, never returns early).
@Suite struct LifecycleTests {
    /// Runs `body` on a thread of its own; false if it has not returned within `seconds` (the
    /// thread is then left behind, blocked: the test fails rather than hangs).
    static func returns(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done.wait(timeout: .now() + seconds) == .success
    }

    @Test func aServerWithRetentionStopsTwice() throws {
        let server = try TestServer { c in
            c.retention = 30 * RetentionTests.day
            c.retentionInterval = 0.05
        }
        defer { try? FileManager.default.removeItem(atPath: server.directory) }
        server.client.close()
        let monitor = server.server
        #expect(Self.returns(within: 10) { monitor.stop() })
        #expect(Self.returns(within: 10) { monitor.stop() }, "the second stop() waited for ever")
    }

    /// A second `close()`, made while the first is still flushing, returns only once the store is
    /// closed: its file lock released (another store can open the file), its connections closed.
    @Test func aSecondCloseReturnsOnceTheStoreIsClosed() throws {
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/monitor.sqlite"
        let store = try EventStore(path: path)
        // Keep the writer busy for a second, so that the first close() has to wait for it.
        Self.keepWriterBusy(store, seconds: 1)
        Thread { store.close() }.start()
        while !store.isClosed { Thread.sleep(forTimeInterval: 0.001) }

        store.close()
        #expect(throws: Never.self, "the second close() returned while the store still held the file") {
            try EventStore(path: path).close()
        }
    }

    /// This process's threads named `name` (as `Thread.current.name` sets it, in /proc).
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
            return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    /// A server that cannot bind its port leaves no store thread behind and lets go of its
    /// database file (a second attempt, on another port, opens it).
    @Test func aPortInUseLeavesNoThreadAndNoLockBehind() throws {
        let first = try TestServer()
        defer { first.stop() }
        let writersBefore = Self.threads(named: "store-writer")
        #expect(writersBefore >= 1)
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var c = first.configuration
        c.databasePath = directory + "/monitor.sqlite"
        c.port = first.server.port
        #expect(throws: (any Error).self) { try MonitorServer(c) }
        // A stopped thread signals before it returns: allow it a moment to leave /proc.
        func settled(_ name: String) -> Bool {
            for _ in 0..<200 where Self.threads(named: name) > writersBefore { Thread.sleep(forTimeInterval: 0.01) }
            return Self.threads(named: name) <= writersBefore
        }
        #expect(settled("store-writer"))
        #expect(settled("checkpointer"))
        c.port = 0
        let second = try MonitorServer(c)
        second.stop()
    }

    /// stop() while a request waits for the writer: the request is answered 200 and its event is
    /// there after a restart (HTTP stops before the writer, which finishes what was queued).
    @Test func stopWhileAnIngestWaitsForTheWriterAnswersAndKeepsIt() throws {
        let server = try TestServer()
        defer { server.stop() }
        let store = server.server.store
        Self.keepWriterBusy(store, seconds: 0.5)
        let status = LockedCounter()
        let answered = DispatchSemaphore(value: 0)
        let port = server.server.port
        Thread {
            let client = HTTPClient(port: port)
            defer { client.close() }
            let body = Array(JSONValue.array([IngestTests.started("in-flight")]).jsonString.utf8)
            status.add((try? client.request("POST", "/v1/events", headers: [("Content-Type", "application/json")],
                                            body: body).status) ?? -1)
            answered.signal()
        }.start()
        Thread.sleep(forTimeInterval: 0.1)   // the request reaches the writer's queue
        server.server.stop()
        #expect(answered.wait(timeout: .now() + 10) == .success)
        #expect(status.value == 200)
        try server.restart()
        #expect(try server.get("/api/activities/in-flight").status == 200)
    }

    /// Returns once the writer has begun a job that holds it for `seconds`.
    static func keepWriterBusy(_ store: EventStore, seconds: Double) {
        let writerBusy = DispatchSemaphore(value: 0)
        Thread {
            _ = store.submit(.withConnection { _ in
                writerBusy.signal()
                Thread.sleep(forTimeInterval: seconds)
            })
        }.start()
        writerBusy.wait()
    }
}
