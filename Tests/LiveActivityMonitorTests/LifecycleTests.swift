import Dispatch
import Foundation
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
        let writerBusy = DispatchSemaphore(value: 0)
        Thread {
            _ = store.submit(.withConnection { _ in
                writerBusy.signal()
                Thread.sleep(forTimeInterval: 1)
            })
        }.start()
        writerBusy.wait()
        Thread { store.close() }.start()
        while !store.isClosed { Thread.sleep(forTimeInterval: 0.001) }

        store.close()
        #expect(throws: Never.self, "the second close() returned while the store still held the file") {
            try EventStore(path: path).close()
        }
    }
}
