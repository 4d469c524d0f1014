import Foundation
import JSON
import Testing
@testable import LiveActivityMonitor

/// The queue of what time alone will change: one entry per live activity's next deadline,
/// not one per commit that touched it.
@Suite struct DeadlineQueueTests {
    static let now = TestServer.base

    static func events(_ values: [JSONValue]) throws -> [Event] {
        try IngestDecoder().decode(Array(JSONValue.array(values).jsonString.utf8), format: .json)
    }

    /// Every commit that touches an activity schedules its next deadline again; entries for the
    /// deadlines it replaced must not pile up (they did: one per update, for 8 hours).
    @Test func updatesDoNotGrowTheQueueAndDeadlinesStillFire() throws {
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (clock, time) = Clock.manual(Self.now)
        let store = try EventStore(path: directory + "/db.sqlite", clock: clock)
        defer { store.close() }
        let started = Self.now - 600
        _ = try store.ingest(Self.events([IngestTests.started("a", at: started), IngestTests.started("b", at: started)])).get()
        for i in 0..<400 {
            // A new stale date each time: each update moves the activity's next deadline.
            let push = Scenario.push(i % 2 == 0 ? "a" : "b", "p\(i)", at: started + Double(i), token: IngestTests.token,
                                     extra: ["stale_date": Self.now + 3600 + Double(i), "content_state": ["startedAt": started, "elapsed": i]])
            #expect(try store.ingest(Self.events([push])).get().accepted == 1)
        }
        let queued = store.state.withLock { $0.records.queuedDeadlines }
        #expect(queued <= 2 * 2 + DeadlineQueue<Int32>.slack, "\(queued) entries for 2 live activities")

        // The last stale dates still fire: a at now + 3600 + 398, b at now + 3600 + 399.
        time.set(Self.now + 3600 + 398.5)
        store.sweepIfDue()
        #expect(try store.record("a")?.state(at: time.value) == .stale)
        #expect(try store.record("b")?.state(at: time.value) == .active)
        #expect(try store.record("b")?.staleCounted == false)
        time.set(Self.now + 3600 + 400)
        store.sweepIfDue()
        #expect(try store.record("b")?.staleCounted == true)
    }

    /// A restart after hours down finds every live activity due at once (a million took 75 s and
    /// 2 GB in one commit, and start-up waited for it): each commit takes at most
    /// `duePerCommit` of them, start-up waits for the first only, and the rest follow.
    @Test func aRestartAfterHoursDownCatchesUpInBoundedCommits() throws {
        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/db.sqlite"
        let (clock, time) = Clock.manual(Self.now)
        let n = 2 * ActivityTable.duePerCommit + 100
        let started = Self.now - 60
        do {
            let store = try EventStore(path: path, clock: clock)
            defer { store.close() }
            for first in stride(from: 0, to: n, by: 1000) {
                let batch = (first..<min(n, first + 1000)).map { IngestTests.started("c\($0)", at: started) }
                #expect(try store.ingest(Self.events(batch)).get().accepted == batch.count)
            }
        }
        time.set(Self.now + 9 * 3600)
        let store = try EventStore(path: path, clock: clock)
        defer { store.close() }
        store.catchUp()
        #expect(store.state.withLock { $0.earliestDeadline } > time.value, "nothing left due")
        try Self.expectCaughtUp(store, n: n, started: started)
    }

    /// The same on the PostgreSQL store.
    @Test func aRestartAfterHoursDownCatchesUpInBoundedCommitsOnPostgres() throws {
        let n = 2 * ActivityTable.duePerCommit + 100
        let started = Self.now - 60
        let first = try PostgresInProcessMonitor(now: Self.now)
        for k in stride(from: 0, to: n, by: 1000) {
            let batch = (k..<min(n, k + 1000)).map { IngestTests.started("c\($0)", at: started) }
            #expect(try first.store.ingest(Self.events(batch)).get().accepted == batch.count)
        }
        first.stop()
        let again = try PostgresInProcessMonitor(now: Self.now + 9 * 3600, uri: first.uri)
        defer { again.stop() }
        again.store.sweepIfDue()
        #expect(again.store.state.withLock { $0.earliestDeadline } > again.time.value, "nothing left due")
        try Self.expectCaughtUp(again.store, n: n, started: started)
    }

    /// The catch-up took at least a commit per `duePerCommit` activities, and the activities
    /// `c0`…`c{n-1}` ended at their 8 hours.
    static func expectCaughtUp(_ store: some MonitorStore, n: Int, started: Double) throws {
        let sweeps = (n + ActivityTable.duePerCommit - 1) / ActivityTable.duePerCommit
        #expect(store.commitDurations.count >= UInt64(sweeps), "\(store.commitDurations.count) commits for \(n) due")
        for i in [0, n / 2, n - 1] {
            #expect(try store.record("c\(i)")?.endedAt == started + LockScreenRules.maxActiveDuration, "c\(i)")
        }
    }

    @Test func aRebuiltQueuePopsInDeadlineOrder() {
        var generator = SystemRandomNumberGenerator()
        let entries = (0..<1000).map { i in (at: Double.random(in: 0..<500, using: &generator), id: "a\(i)") }
        var queue = DeadlineQueue(times: entries.map(\.at), ids: entries.map(\.id))
        #expect(queue.count == 1000)
        var popped: [String] = []
        for t in stride(from: 0.0, through: 504, by: 7) { popped += queue.popDue(t) }
        let deadline = Dictionary(uniqueKeysWithValues: entries.map { ($0.id, $0.at) })
        #expect(popped.count == 1000)
        #expect(zip(popped, popped.dropFirst()).allSatisfy { deadline[$0]! <= deadline[$1]! })
    }

    /// What a scrape ahead of the writer reads: the entries due, left in place, exactly those
    /// that popping would take.
    @Test func dueEntriesAreThoseThatPopWouldTake() {
        var generator = PushEventScannerTests.Seeded(state: 7)
        let entries = (0..<2000).map { i in (at: Double(Int.random(in: 0..<500, using: &generator)), id: "a\(i % 700)") }
        let queue = DeadlineQueue(times: entries.map(\.at), ids: entries.map(\.id))
        for t in [-1.0, 0, 3, 250, 499, 500] {
            var copy = queue
            #expect(queue.due(at: t).sorted() == copy.popDue(t).sorted(), "at \(t)")
            #expect(queue.count == 2000)
        }
    }
}
