import Dispatch
import Foundation
import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// Live tests of ingest over the event-driven HTTP layer: a request waiting for its commit is
/// suspended (no polling thread held) and answered only once its events are durable, in commit
/// order; a client gone meanwhile still has its events stored whole.
@Suite struct SuspendedIngestTests {
    /// Holds the store writer in a job of its own until `release` is signalled.
    static func holdWriter(_ store: EventStore) -> (held: DispatchSemaphore, release: DispatchSemaphore) {
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        Thread { _ = store.submit(.withConnection { _ in held.signal(); release.wait() }) }.start()
        return (held, release)
    }

    static func waitUntil(seconds: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(2_000)
        }
        return condition()
    }

    static func ingestsQueued(_ store: EventStore) -> Int {
        store.queuedKinds.filter { if case .ingest = $0 { true } else { false } }.count
    }

    static func request(_ events: [JSONValue]) -> String {
        let body = JSONValue.array(events).jsonString
        return "POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    }

    /// With one polling thread: A waits for a commit that the writer (held) has not made; the
    /// writer then commits A and is held again before B's commit. A is answered after its
    /// commit and before B's; B only after its own; meanwhile other requests are served at once.
    @Test func requestsAreAnsweredAfterTheirCommitInCommitOrder() throws {
        let server = try TestServer { $0.httpThreads = 1 }
        defer { server.stop() }
        let store = server.server.store
        let port = server.server.port
        let a = try RawConnection(port: port, receiveTimeout: 5), b = try RawConnection(port: port, receiveTimeout: 5)

        let first = Self.holdWriter(store)
        first.held.wait()
        try a.send(Self.request([StoreHealthTests.bigBatch("a", count: 1)[0]]))
        #expect(Self.waitUntil { Self.ingestsQueued(store) == 1 })
        #expect(a.readResponse(seconds: 0.3) == nil, "answered before its commit")
        #expect(try server.get("/-/healthy").status == 200, "the polling thread is held by a waiting request")

        // The writer's next wake-up takes A and a second hold: A commits, then the writer waits.
        let second = Self.holdWriter(store)
        #expect(Self.waitUntil { store.queuedKinds.count == 2 })
        first.release.signal()
        second.held.wait()
        let answerA = a.readResponse(seconds: 3)
        #expect(answerA?.status == 200)
        #expect(answerA?.text == #"{"accepted":1,"duplicates":0}"#)

        try b.send(Self.request([StoreHealthTests.bigBatch("b", count: 1)[0]]))
        #expect(Self.waitUntil { Self.ingestsQueued(store) == 1 })
        #expect(b.readResponse(seconds: 0.3) == nil, "B answered before its commit")
        second.release.signal()
        #expect(b.readResponse(seconds: 3)?.status == 200)
        #expect(try a.get("/-/healthy").status == 200, "keep-alive lost after a resumed ingest")
    }

    /// A client that sends a batch and goes away before its commit: the batch is stored whole
    /// all the same, and the server is not left holding anything (new requests are served).
    @Test func aClientGoneWhileWaitingHasItsEventsStoredWhole() throws {
        let server = try TestServer { $0.httpThreads = 1 }
        defer { server.stop() }
        let store = server.server.store
        let hold = Self.holdWriter(store)
        hold.held.wait()
        let connection = try RawConnection(port: server.server.port)
        try connection.send(Self.request(StoreHealthTests.bigBatch("gone", count: 20)))
        #expect(Self.waitUntil { Self.ingestsQueued(store) == 1 })
        connection.close()
        usleep(50_000)
        hold.release.signal()
        // The writer takes the queue at once and commits it: wait until any of the batch shows.
        #expect(Self.waitUntil { (try? (0..<20).contains { try store.record("gone-\($0)") != nil }) == true })
        let stored = try (0..<20).filter { try store.record("gone-\($0)") != nil }.count
        #expect(stored == 20)
        #expect(try server.post(events: StoreHealthTests.bigBatch("after", count: 1)).status == 200)
    }
}
