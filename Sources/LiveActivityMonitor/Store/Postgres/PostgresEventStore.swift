import Dispatch
import Foundation
import PostgresDB
import Prometheus
import Synchronization

/// The monitor's store in PostgreSQL (`serve --db postgres://…`, DESIGN.md section 9): the same
/// guarantees as the SQLite `EventStore` through the same engine. One writer thread commits the
/// events of every waiting request in one transaction (group commit, `synchronous_commit = on`);
/// each request is answered once its commit returned. Live state is mirrored in memory; every
/// commit also brings the tables up to date, so that start-up rebuilds memory from them.
///
/// After a failed commit (the server gone, a full disk) memory is rebuilt from the tables before
/// the next one: whether or not the failed COMMIT reached the disk, the tables say what is true.
final class PostgresEventStore: Sendable {
    let clock: Clock
    let settings: EngineSettings
    let state: Mutex<MonitorState>
    let readers: PostgresConnectionPool
    let commitSeconds = Mutex(HistogramValue(upperBounds: MonitorMetrics.commitSeconds.buckets))
    let maxLiveActivities: Int
    let evicted = Atomic(0)
    let writeFailure = Mutex<String?>(nil)
    let log: @Sendable (String) -> Void
    private let reload: @Sendable (PostgresConnection) throws -> MonitorState
    private let queue = Mutex<(jobs: [WriteJob], stopping: Bool)>(([], false))
    private let wake = DispatchSemaphore(value: 0)
    private let writerStopped = DispatchSemaphore(value: 0)
    private let closed = Gate()
    private let lastProbe = Mutex<UInt64>(0)

    init(uri: String, password: String? = nil, clock: Clock = .system, reservedTypes: [String] = [],
         declaredShapes: [String: ObjectShape] = [:], maxLiveActivities: Int = EventStore.defaultMaxLiveActivities,
         settings: EngineSettings = EngineSettings(), readConnections: Int = 4, epoch: Int64? = nil,
         log: @escaping @Sendable (String) -> Void = { _ in }) throws {
        self.clock = clock
        self.settings = settings
        self.maxLiveActivities = maxLiveActivities
        self.log = log
        let db = try PostgresStoreDatabase.open(uri: uri, password: password)
        reload = { db in
            try PostgresStateLoader.loadServing(db, reservedTypes: reservedTypes, declaredShapes: declaredShapes,
                                                maxLiveActivities: maxLiveActivities,
                                                priority10Budget: settings.priority10Budget, now: clock.now())
        }
        state = Mutex(try reload(db))
        let writer = PostgresWriterSlot(db, PostgresCommitWriter(db, epoch: epoch), persisted: state.withLock { $0.takeTableCounters() })
        readers = PostgresConnectionPool(maxIdle: readConnections) { try PostgresStoreDatabase.connect(uri: uri, password: password) }
        Thread.start(named: "store-writer") { [self] in
            writeUntilStopped(writer)
            writer.release()
            writerStopped.signal()
        }
        // Whatever happened while the server was down (stale dates, 8 h ends) happens now.
        _ = submit(.sweep)
        clock.onMove? { [weak self] in self?.sweepIfDue() }
    }

    // MARK: Writes

    func ingest(_ events: [Event]) -> Result<IngestSummary, APIError> {
        submit(.ingest(events))
    }

    func ingest(_ events: [Event], then: @escaping @Sendable (Result<IngestSummary, APIError>) -> Void) {
        let job = WriteJob(.ingest(events), then: then)
        guard enqueue(job) else { return then(.failure(.unavailable("the server is shutting down"))) }
    }

    func sweepIfDue() {
        let now = clock.now()
        guard state.withLock({ $0.earliestDeadline <= now }) else { return }
        state.sweepUntilNoneDue(at: now, submit: submit)
    }

    /// Counted in memory; a sweep of its own writes it within a second (at most one queued).
    func countRejection(_ reason: MonitorMetrics.Rejection) {
        let queue = state.withLock { s in
            s.unpersisted.inc(MonitorMetrics.ingestRejected, reason.rawValue)
            defer { s.flushQueued = true }
            return !s.flushQueued
        }
        guard queue else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + EventStore.rejectionFlushInterval) { [self] in
            _ = enqueue(WriteJob(.sweep))
        }
    }

    /// Finishes queued work, stops the writer and closes the connections. Idempotent.
    func close() {
        let first = queue.withLock { q in
            defer { q.stopping = true }
            return !q.stopping
        }
        guard first else { return closed.wait() }
        queue.withLock { $0.jobs.append(WriteJob(.sweep)) }
        wake.signal()
        writerStopped.wait()
        readers.close()
        closed.open()
    }

    var isClosed: Bool { queue.withLock { $0.stopping } }

    func submit(_ kind: WriteJob.Kind) -> Result<IngestSummary, APIError> {
        let job = WriteJob(kind)
        guard enqueue(job) else { return .failure(.unavailable("the server is shutting down")) }
        return job.wait()
    }

    private func enqueue(_ job: WriteJob) -> Bool {
        let accepted = queue.withLock { q in
            if !q.stopping { q.jobs.append(job) }
            return !q.stopping
        }
        if accepted { wake.signal() }
        return accepted
    }

    // MARK: The writer

    private func writeUntilStopped(_ writer: PostgresWriterSlot) {
        var lastTimedSweep = DispatchTime(uptimeNanoseconds: 0)
        while true {
            if wake.wait(timeout: nextTimedSweep(after: lastTimedSweep)) == .timedOut {
                lastTimedSweep = .now()
                if state.withLock({ $0.passTime(to: clock.now()) }) { _ = enqueue(WriteJob(.sweep)) }
                continue
            }
            let (jobs, stopping) = queue.withLock { q in
                defer { q.jobs = [] }
                return (q.jobs, q.stopping)
            }
            let writes = jobs.filter { !$0.kind.isMaintenance }
            if !writes.isEmpty { commitIsolatingFailures(writes, writer) }
            // A probe is a commit with nothing in it; SQLite's connection hooks have no meaning here.
            for job in jobs where job.kind.isMaintenance {
                if case .probe = job.kind {
                    commit([job], writer)
                } else {
                    job.finish(.failure(.unavailable("not supported by the PostgreSQL store")))
                }
            }
            if stopping, queue.withLock({ $0.jobs.isEmpty }) { break }
        }
    }

    private func nextTimedSweep(after last: DispatchTime) -> DispatchTime {
        let earliest = state.withLock { $0.nextWake }
        let seconds = min(3600, max(0, earliest - clock.now()))
        return max(DispatchTime.now() + seconds, last + EventStore.timedSweepInterval)
    }

    /// One commit for every job; if it fails for a value one of them holds (a data exception:
    /// PostgreSQL will not take it), each is committed again alone, so that one client's event
    /// fails its own request and not every request it shared a commit with, for as long as that
    /// client retries it.
    private func commitIsolatingFailures(_ jobs: [WriteJob], _ writer: PostgresWriterSlot) {
        guard jobs.count > 1 else {
            commit(jobs, writer)
            return
        }
        guard let error = commit(jobs, writer, answeringFailure: false) else { return }
        guard (error as? PostgresError)?.isDataException == true else {
            let failure = Self.unavailable(error)
            for job in jobs { job.finish(.failure(failure)) }
            return
        }
        for job in jobs { commit([job], writer) }
    }

    /// One transaction for every job; published to memory and answered after COMMIT. On failure
    /// the jobs are refused, or (`answeringFailure` false) left to the caller with the error.
    @discardableResult
    private func commit(_ jobs: [WriteJob], _ writer: PostgresWriterSlot, answeringFailure: Bool = true) -> (any Error)? {
        let failed = { (error: any Error) -> (any Error)? in
            self.fail(answeringFailure ? jobs : [], error, writer)
            return error
        }
        let started = DispatchTime.now().uptimeNanoseconds
        let now = clock.now()
        do {
            try writer.recoverIfNeeded { db in
                let fresh = try reload(db)
                return state.withLock { s in
                    // Counts not written yet stay counted.
                    let unpersisted = s.unpersisted
                    s = fresh
                    s.unpersisted = unpersisted
                    return s.takeTableCounters()
                }
            }
        } catch {
            return failed(error)
        }
        let batches = jobs.map { job -> [Event] in
            if case .ingest(let events) = job.kind { events } else { [] }
        }
        do { try writer.ensurePartitions(batches) } catch { return failed(error) }
        let db = writer.db
        let (counters, labels, shapes, taken, due) = state.withLock { s in
            defer { s.persisting = s.unpersisted; s.unpersisted = MonitorCounters(); s.flushQueued = false }
            return (s.counters, s.labels, s.shapes, s.unpersisted, s.records.popDueDeadlines(now, limit: ActivityTable.duePerCommit))
        }
        let (starts, channels) = state.withLock { ($0.takeStarts(), $0.channels) }
        var changes = CommitChanges(
            counters: counters, labels: labels, shapes: shapes, starts: starts, channels: channels,
            settings: settings,
            load: { [self] id in try state.withLock({ $0.records[id] }) ?? PostgresStateLoader.record(id, db) },
            subscribers: subscriberFinder())
        changes.counters.add(taken)
        changes.reserveSlots(batches.reduce(0) { $0 + $1.count })
        let summaries: [IngestSummary]
        do {
            summaries = try writer.commit(batches, at: now, due: due.ids, &changes)
        } catch {
            state.withLock { s in
                s.unpersisted.add(taken)
                s.persisting = MonitorCounters()
            }
            return failed(error)
        }
        writer.persisted = changes.counters
        publish(&changes, at: now)
        // More may be due than one commit takes: the next sweep is queued behind what waits.
        if due.moreDue { _ = enqueue(WriteJob(.sweep)) }
        evictOverflow()
        recordWriteProblem(nil)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        commitSeconds.withLock { $0.observe(seconds) }
        for (j, job) in jobs.enumerated() { job.finish(.success(summaries[j])) }
        return nil
    }

    /// Nothing of the commit is known to be stored: every request in it is refused (503), and
    /// memory is rebuilt from the tables before the next commit.
    private func fail(_ jobs: [WriteJob], _ error: any Error, _ writer: PostgresWriterSlot) {
        writer.needsRecovery = true
        let failure = Self.unavailable(error)
        recordWriteProblem(failure.message)
        for job in jobs { job.finish(.failure(failure)) }
    }

    private func publish(_ changes: inout CommitChanges, at now: Double) {
        state.withLock { $0.publish(&changes, at: now) }
    }

    /// Past `maxLiveActivities`, the oldest-started leave memory (their rows are current).
    private func evictOverflow() {
        let gone = state.withLock { s in
            s.records.count > maxLiveActivities ? s.records.removeOldestStarted(downTo: maxLiveActivities / 100 * 95) : 0
        }
        guard gone > 0 else { return }
        evicted.wrappingAdd(gone, ordering: .relaxed)
        log("store: \(gone) oldest-started live activities left memory (--max-live-activities \(maxLiveActivities)); they are still stored")
    }

    /// The activities in memory subscribed to a channel, as `EventStore` finds them.
    private func subscriberFinder() -> (String) -> [(id: String, record: ActivityRecord)] {
        { [self] channel in state.withLock { $0.records.subscriberRecords(of: channel) } }
    }

    /// Sets (or with nil clears) why the store cannot write (`WriteProblem`).
    func recordWriteProblem(_ problem: String?) {
        WriteProblem.record(problem, in: writeFailure, log: log)
    }

    /// Why a commit failed, in words an operator can act on; PostgreSQL's primary messages
    /// carry no row values (the DETAIL, which does, is not kept).
    static func writeProblem(_ error: any Error) -> String {
        if let deposed = error as? LeaderEpoch.Deposed { return deposed.description }
        guard let e = error as? PostgresError else { return "store error: \(error)" }
        if e.isConnectionFailure { return "the PostgreSQL server cannot be reached (\(e.message))" }
        if e.isDiskFull { return "the PostgreSQL server's disk is full" }
        if e.isReadOnly { return "the PostgreSQL database is read-only for this server (a standby?)" }
        return "the PostgreSQL database could not commit (\(e.description))"
    }

    static func unavailable(_ error: any Error) -> APIError {
        .unavailable(writeProblem(error) + "; nothing from this request was stored")
    }

    /// Why the store cannot take writes, or nil. While failing, probes with an empty commit at
    /// most once a second (which also reconnects and rebuilds memory).
    func readinessProblem() -> String? {
        if isClosed { return "the store is closed" }
        guard let failure = writeFailure.withLock({ $0 }) else { return nil }
        let now = DispatchTime.now().uptimeNanoseconds
        let due = lastProbe.withLock { last in
            guard now &- last >= 1_000_000_000 else { return false }
            last = now
            return true
        }
        guard due else { return failure }
        if case .failure(let error) = submit(.probe) { return error.message }
        return nil
    }
}

/// What only the writer thread touches: its connection, the counters as last
/// written. Handed to that thread once; never used by another.
final class PostgresWriterSlot: @unchecked Sendable {
    private var connection: PostgresConnection?
    private var commitWriter: PostgresCommitWriter?
    var persisted: MonitorCounters
    var needsRecovery = false

    init(_ db: PostgresConnection, _ writer: PostgresCommitWriter, persisted: MonitorCounters) {
        connection = db
        commitWriter = writer
        self.persisted = persisted
    }

    /// The writer's connection (until `release`).
    var db: PostgresConnection { connection! }

    /// Commits through the writer (see `PostgresCommitWriter.commit`).
    func commit(_ batches: [[Event]], at now: Double, due: [String], _ changes: inout CommitChanges) throws -> [IngestSummary] {
        try commitWriter!.commit(batches, at: now, due: due, persisted: persisted, &changes)
    }

    /// Makes the partitions a commit needs. A connection the server closed since the last
    /// commit (a restart, an idle timeout) is noticed here, before anything of the commit was
    /// sent, so memory still matches the tables: reconnect and try once more.
    func ensurePartitions(_ batches: [[Event]]) throws {
        do {
            try commitWriter!.ensurePartitions(batches)
        } catch let error as PostgresError where error.isConnectionFailure && !db.isConnected {
            try db.reconnect()
            try db.execute("SET synchronous_commit = on")
            try commitWriter!.ensurePartitions(batches)
        }
    }

    /// After a failure: reconnects if the connection is gone, and rebuilds memory from the
    /// tables (`rebuild` returns the counters they hold).
    func recoverIfNeeded(_ rebuild: (PostgresConnection) throws -> MonitorCounters) throws {
        guard needsRecovery else { return }
        if !db.isConnected {
            try db.reconnect()
            try db.execute("SET synchronous_commit = on")
        }
        commitWriter = PostgresCommitWriter(db, epoch: commitWriter?.epoch)
        persisted = try rebuild(db)
        needsRecovery = false
    }

    /// Closes the connection (the writer has stopped).
    func release() {
        commitWriter = nil
        connection = nil
    }
}
