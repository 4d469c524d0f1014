import Dispatch
import Foundation
import JSON
import Prometheus
import SQLiteDB
import Synchronization

/// The durable store: an append-only event log and one current-state row per activity, in
/// SQLite, with the live part of that state mirrored in memory.
///
/// Safe for concurrent use. One writer thread commits the events of every waiting request in
/// one transaction (group commit); each `ingest` call returns only once its events are durable.
/// Reads come from memory or from a pool of read-only connections and never wait for the writer.
public final class EventStore: Sendable {
    public let path: String
    let clock: Clock
    let state: Mutex<MonitorState>
    let readers: ReaderPool
    let commitSeconds = Mutex(HistogramValue(upperBounds: MonitorMetrics.commitSeconds.buckets))
    /// Live activities memory holds at most (`--max-live-activities`); the oldest-started
    /// beyond it are left to the tables (`evictOverflow`).
    let maxLiveActivities: Int
    /// The rules' settings (`--delivery-grace`, `--start-window`), for the writer and replays.
    public let settings: EngineSettings
    /// Live activities taken out of memory since start (still stored).
    let evicted = Atomic(0)
    /// The last write failure, while the store cannot write (cleared by the next good commit).
    let writeFailure = Mutex<String?>(nil)
    /// When `/-/ready` last probed a failing store (uptime nanoseconds), to probe at most once a second.
    let lastProbe = Mutex<UInt64>(0)
    private let queue = Mutex<(jobs: [WriteJob], stopping: Bool)>(([], false))
    private let wake = DispatchSemaphore(value: 0)
    private let writerStopped = DispatchSemaphore(value: 0)
    /// Signalled once `close` has finished, for later callers of `close`.
    private let closed = Gate()
    private let checkpointer: Checkpointer
    private let catchUpInterval: Double
    let fileLock: DatabaseFileLock
    /// Where the store reports what an operator must know: writes failing and recovering, a
    /// database file it could not complete at stop.
    let log: @Sendable (String) -> Void

    /// - Parameter catchUpInterval: how long live activities' rows and the counters may stay
    ///   behind memory in the tables (`DeferredWrites`); tests stretch it.
    /// - Parameter reservedTypes: attributes types that always have their own series.
    public convenience init(path: String, durability: Durability = .normal, clock: Clock = .system,
                            catchUpInterval: Double = EventStore.defaultCatchUpInterval, reservedTypes: [String] = [],
                            maxLiveActivities: Int = EventStore.defaultMaxLiveActivities,
                            settings: EngineSettings = EngineSettings(),
                            log: @escaping @Sendable (String) -> Void = { _ in }) throws {
        try self.init(path: path, durability: durability, clock: clock, catchUpInterval: catchUpInterval,
                      reservedTypes: reservedTypes, declaredShapes: [:], maxLiveActivities: maxLiveActivities,
                      settings: settings, log: log)
    }

    /// - Parameter declaredShapes: content shapes the templates declare, by attributes type.
    init(path: String, durability: Durability, clock: Clock, catchUpInterval: Double, reservedTypes: [String],
         declaredShapes: [String: ObjectShape], maxLiveActivities: Int, settings: EngineSettings,
         log: @escaping @Sendable (String) -> Void) throws {
        self.path = path
        self.settings = settings
        self.catchUpInterval = catchUpInterval
        self.maxLiveActivities = maxLiveActivities
        self.clock = clock
        self.log = log
        let db = try Database(path: path)
        // Before anything is written: another process may be this file's writer.
        fileLock = try DatabaseFileLock(path: path)
        try Self.prepare(db, durability: durability)
        state = Mutex(try Self.load(db, reservedTypes: reservedTypes, declaredShapes: declaredShapes,
                                    maxLiveActivities: maxLiveActivities, priority10Budget: settings.priority10Budget,
                                    now: clock.now()))
        // Set after loading, so that start-up does not fill the larger cache with rows it reads once.
        try Self.tuneWriter(db)
        readers = ReaderPool(path: path)
        checkpointer = try Checkpointer(path: path)
        // After a crash, the events the tables did not include yet (DeferredWrites).
        try replay(db)
        let writer = ConnectionSlot(db)
        Thread.start(named: "store-writer") { [self] in runWriter(writer) }
        // Whatever happened while the server was down (stale dates, 8 h ends) happens now.
        _ = submit(.sweep)
        // A manual clock jumps: its moves sweep at once (a closed store refuses the sweep).
        clock.onMove? { [weak self] in self?.sweepIfDue() }
        // A file opened read-only, or a full disk, shows only on a real write: find out now.
        _ = submit(.probe)
    }

    /// Stores a request's events whole or not at all; returns once they are durable.
    public func ingest(_ events: [Event]) -> Result<IngestSummary, APIError> {
        submit(.ingest(events))
    }

    /// Stores a request's events whole or not at all, and returns at once: `then` is told the
    /// outcome on the writer's thread once they are durable (or failed), in commit order. Keep
    /// it short: the writer waits for it.
    public func ingest(_ events: [Event], then: @escaping @Sendable (Result<IngestSummary, APIError>) -> Void) {
        let job = WriteJob(.ingest(events), then: then)
        let accepted = queue.withLock { q in
            if q.stopping { return false }
            q.jobs.append(job)
            return true
        }
        guard accepted else { return then(.failure(.unavailable("the server is shutting down"))) }
        wake.signal()
    }

    /// Applies and persists what time alone changed, if anything is due; returns once written.
    /// The writer does this by itself at the earliest deadline (`nextTimedSweep`).
    public func sweepIfDue() {
        let now = clock.now()
        if state.withLock({ $0.earliestDeadline <= now }) { state.sweepUntilNoneDue(at: now, submit: submit) }
    }

    /// Counts a refused request. A commit of its own writes it soon, one for all the refusals
    /// counted meanwhile and at most one a second (a flood of refused requests must not become
    /// a flood of commits), so that a restart, even after a crash, loses at most the last second.
    public func countRejection(_ reason: MonitorMetrics.Rejection) {
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        let delay: Double? = state.withLock { s in
            s.unpersisted.inc(MonitorMetrics.ingestRejected, reason.rawValue)
            guard !s.flushQueued else { return nil }
            s.flushQueued = true
            let at = max(now, s.lastFlush + Self.rejectionFlushInterval)
            s.lastFlush = at
            return at - now
        }
        guard let delay else { return }
        if delay <= 0 { return enqueue(.sweep) }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [self] in enqueue(.sweep) }
    }

    static let rejectionFlushInterval = 1.0
    /// A quarter of a second rather than one: the commit that catches up holds back the requests
    /// in it, and the longer the interval the more events it files (`activity_events`); a
    /// history lookup also scans the events not filed yet. Shorter intervals cut tail latency
    /// and lookup time at the same events/s (measured in PERFORMANCE.md).
    public static let defaultCatchUpInterval = 0.25

    /// Brings the current-state and counters tables up to date now (`DeferredWrites`), as a
    /// sweep does; returns once written (or failed: the next commit retries).
    public func catchUp() {
        state.sweepUntilNoneDue(at: clock.now(), submit: submit)
    }

    /// Finishes queued work, writes pending counts, stops the writer. Later ingests fail with 503.
    /// Idempotent: a second caller, or one on another thread at once, returns once closed too.
    public func close() {
        let first = queue.withLock { q in
            defer { q.stopping = true }
            return !q.stopping
        }
        guard first else {
            closed.wait()
            return
        }
        checkpointer.stop()
        _ = submitUnchecked(.sweep)
        wake.signal()
        writerStopped.wait()
        readers.close()
        closed.open()
    }

    /// True once `close` has begun: the store takes no more writes.
    var isClosed: Bool { queue.withLock { $0.stopping } }

    /// What waits for the writer's next wake-up, which takes it all at once (tests wait on it
    /// to put jobs in one wake-up without sleeping).
    var queuedKinds: [WriteJob.Kind] { queue.withLock { $0.jobs.map(\.kind) } }

    func submit(_ kind: WriteJob.Kind) -> Result<IngestSummary, APIError> {
        let job = WriteJob(kind)
        let accepted = queue.withLock { q in
            if q.stopping { return false }
            q.jobs.append(job)
            return true
        }
        guard accepted else { return .failure(.unavailable("the server is shutting down")) }
        wake.signal()
        return job.wait()
    }

    /// Queues a job nobody waits for (refused while stopping: `close` flushes anyway).
    private func enqueue(_ kind: WriteJob.Kind) {
        let accepted = queue.withLock { q in
            if !q.stopping { q.jobs.append(WriteJob(kind)) }
            return !q.stopping
        }
        if accepted { wake.signal() }
    }

    /// Queues a job even while stopping (used by `close` for the final flush).
    private func submitUnchecked(_ kind: WriteJob.Kind) -> WriteJob {
        let job = WriteJob(kind)
        queue.withLock { $0.jobs.append(job) }
        return job
    }

    /// When the writer next looks for deadlines that fell due: the earliest one, but at most
    /// once a second (a large fleet has one every few milliseconds; each commit takes the due
    /// ones anyway) and at least once an hour.
    private func nextTimedSweep(after last: DispatchTime) -> DispatchTime {
        let earliest = state.withLock { $0.nextWake }
        let seconds = min(3600, max(0, earliest - clock.now()))
        return max(DispatchTime.now() + seconds, last + Self.timedSweepInterval)
    }

    static let timedSweepInterval = 1.0

    private func runWriter(_ slot: ConnectionSlot) {
        if let db = slot.database { writeUntilStopped(db) }
        slot.database = nil  // closed before close() returns
        fileLock.release()
        writerStopped.signal()
    }

    private func writeUntilStopped(_ db: Database) {
        var deferred = DeferredWrites(counters: state.withLock { $0.takeTableCounters() }, interval: catchUpInterval)
        var lastTimedSweep = DispatchTime(uptimeNanoseconds: 0)
        while true {
            if wake.wait(timeout: nextTimedSweep(after: lastTimedSweep)) == .timedOut {
                // Time alone changes states (stale, 8 h end, dismissal): the writer applies it
                // on its own schedule, so that no reader (a scrape) ever waits for a commit.
                lastTimedSweep = .now()
                if state.withLock({ $0.passTime(to: clock.now()) }) { enqueue(.sweep) }
                continue
            }
            let (jobs, stopping) = queue.withLock { q in
                defer { q.jobs = [] }
                return (q.jobs, q.stopping)
            }
            let writes = jobs.filter { !$0.kind.isMaintenance }
            if !writes.isEmpty { commit(writes, db, &deferred, stopping: stopping) }
            for job in jobs where job.kind.isMaintenance { maintain(job, db) }
            if stopping, queue.withLock({ $0.jobs.isEmpty }) { break }
        }
        // Leave the database file complete on its own: a copy of it taken after a clean stop,
        // without the -wal file beside it, has every event (the log would otherwise hold
        // everything since the last automatic checkpoint). Nothing reads any more: HTTP and
        // retention stop first. Best effort: the log is still valid if this cannot finish.
        do { try db.checkpoint(truncate: true) } catch {
            log("store: at stop, the log could not be folded into \(path) (\(Self.writeProblem(error))): "
                + "keep its -wal file beside it, which holds the latest events")
        }
    }

    /// One transaction for every waiting job; published to memory and answered after COMMIT.
    private func commit(_ jobs: [WriteJob], _ db: Database, _ deferred: inout DeferredWrites, stopping: Bool) {
        if let problem = fileLock.fileProblem() {
            recordWriteProblem(problem)
            for job in jobs { job.finish(.failure(.unavailable(problem))) }
            return
        }
        let started = DispatchTime.now().uptimeNanoseconds
        let now = clock.now()
        let (counters, labels, shapes, taken) = state.withLock { s in
            defer { s.persisting = s.unpersisted; s.unpersisted = MonitorCounters(); s.flushQueued = false }
            return (s.counters, s.labels, s.shapes, s.unpersisted)
        }
        // The book moves into the commit (no other reference: it changes in place, uncopied).
        let (starts, channels) = state.withLock { ($0.takeStarts(), $0.channels) }
        var changes = CommitChanges(counters: counters, labels: labels, shapes: shapes, starts: starts,
                                    channels: channels, settings: settings, load: recordLoader(db),
                                    subscribers: subscriberFinder(), texts: textReader(db),
                                    known: knownReader(db))
        changes.counters.add(taken)
        changes.reserveSlots(jobs.reduce(0) { if case .ingest(let events) = $1.kind { $0 + events.count } else { $0 } })
        var summaries = [IngestSummary](repeating: IngestSummary(), count: jobs.count)
        var due: [String] = []
        var moreDue = false
        var flush = false, accepted = 0

        do {
            try db.transaction(.immediate) {
                let insert = try db.cached("""
                    INSERT OR IGNORE INTO events (event_id, type, activity_id, booking_id, occurred_at, received_at, body,
                                                  booking_in_row)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                // The stored text of an event that inherits its booking, written in place: one
                // buffer for the commit instead of a String an event.
                var inherited: [UInt8] = []
                for (j, job) in jobs.enumerated() {
                    guard case .ingest(let events) = job.kind else { continue }
                    for event in events {
                        // An inherited booking goes into the stored document only: the column
                        // (and its index) holds bookings the client gave. A lookup by booking
                        // finds the rest through the booking's activities (EventStore+Reads).
                        let booking = event.bookingID == nil ? try event.activityID.flatMap { try changes.bookingID(of: $0) } : nil
                        // A booking given that its activity's row holds is found through the row.
                        let inRow = try changes.bookingInRow(event)
                        try insert.bind(event.key, at: 1)
                        try insert.bind(event.type.rawValue, at: 2)
                        try insert.bind(event.activityID, at: 3)
                        try insert.bind(event.bookingID, at: 4)
                        try insert.bind(event.occurredAt, at: 5)
                        try insert.bind(now, at: 6)
                        try insert.bind(inRow == .no ? SQLiteValue.null : .integer(1), at: 8)
                        // The body, the row's longest value, lent to SQLite for the step (then reset).
                        if let booking {
                            Self.write(event.body, inheriting: booking, into: &inherited)
                            _ = try insert.withText(utf8: inherited, at: 7) { try insert.step() }
                        } else {
                            _ = try insert.withText(event.body, at: 7) { try insert.step() }
                        }
                        guard db.changes > 0 else {
                            summaries[j].duplicates += 1
                            changes.duplicate(event)
                            let inheriting = booking == nil ? nil : String(decoding: inherited, as: UTF8.self)
                            if try Self.conflicts(event.key, sent: event.body, inheriting: inheriting, db) {
                                summaries[j].conflicts += 1
                                changes.counters.inc(MonitorMetrics.ingestConflicts)
                            }
                            continue
                        }
                        summaries[j].accepted += 1
                        let seq = db.lastInsertRowID
                        if let id = event.activityID { deferred.named.insert(ExactString(id)) }
                        try changes.apply(event, seq: seq, receivedAt: now)
                        // A start that started nothing, or not under that booking: indexed after all.
                        if inRow == .ifStarted, let id = event.activityID, try changes.bookingID(of: id) != event.bookingID {
                            try db.run("UPDATE events SET booking_in_row = NULL WHERE seq = ?", [.integer(seq)])
                        }
                    }
                }
                // In the commit of their events: a replay after a crash finds them.
                try Self.write(changes.takeWrites(), db)
                (due, moreDue) = state.withLock { $0.records.popDueDeadlines(now, limit: ActivityTable.duePerCommit) }
                try changes.finish(at: now, due: due)
                // Replay at start-up redoes commits by their events, from the tables as they were
                // at `applied_seq`: these commits bring them up to date, and so do one a second
                // and the last. Replay cannot redo what time alone changed (a sweep), count
                // duplicates or refused requests again, nor find a record that left memory (its
                // dismissal) or one the tables do not have (a new activity) but in its row.
                accepted = summaries.reduce(0) { $0 + $1.accepted }
                flush = jobs.contains { if case .sweep = $0.kind { true } else { false } }
                    || summaries.contains { $0.duplicates > 0 } || taken != MonitorCounters()
                    || stopping || deferred.isDue(adding: accepted) || changes.needsRowNow
                if flush {
                    let written = try Self.writeRows(of: changes, at: now, db)
                    try Self.write(changes.startChanges, db)
                    try writeBehind(deferred.rows.subtracting(written), changes, since: deferred.counters,
                                    named: deferred.named, db)
                }
            }
        } catch {
            let failure = Self.unavailable(error)
            // The book changed in place: the tables hold it as of the last commit.
            let book = (try? Self.loadStarts(db)) ?? changes.starts
            state.withLock { s in
                s.publish(book)
                // Memory's book is as the last commit left it: this one's changes are not kept.
                s.unpersisted.add(taken)
                s.persisting = MonitorCounters()
                for id in due { s.records.scheduleDeadline(now, of: id) }
            }
            recordWriteProblem(failure.message)
            for job in jobs { job.finish(.failure(failure)) }
            return
        }
        // Every live row is up to date after a flush: memory lets go of those records' texts.
        publish(&changes, at: now, rowsWritten: flush ? changes.changedIDs.union(deferred.rows) : [])
        // More may be due than one commit takes: the next sweep is queued behind what waits.
        if moreDue { enqueue(.sweep) }
        if flush {
            deferred.flushed(changes.counters)
            evictOverflow()
        } else {
            deferred.deferred(changes.changedIDs, events: accepted)
            scheduleFlush(&deferred)
        }
        if jobs.contains(where: { if case .ingest = $0.kind { true } else { false } }) { recordWriteProblem(nil) }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        commitSeconds.withLock { $0.observe(seconds) }
        for (j, job) in jobs.enumerated() { job.finish(.success(summaries[j])) }
    }

    /// Whether the event stored under `key` is another than the one sent again (a client that
    /// reused an id): the stored one stays, and the answer and a counter say so. Only on a
    /// duplicate, so a read on a path that retries take, not on every insert.
    private static func conflicts(_ key: String?, sent: String, inheriting: String?, _ db: Database) throws -> Bool {
        guard let key else { return false }
        let select = try db.cached("SELECT body FROM events WHERE event_id = ?")
        defer { select.reset() }
        try select.bind(key, at: 1)
        return try select.step() && isConflict(stored: select.text(0) ?? "", sent: sent, inheriting: inheriting)
    }

    /// Whether a duplicate's stored body is another event than the one sent again: neither the
    /// body sent nor that body with the booking its activity gives it now (`inheriting`). The
    /// stored body holds the booking its activity had when it was first stored, or none when the
    /// activity was not known yet: a retry of a push reported before its activity's start is the
    /// same event, not a conflict. Both stores judge by this.
    static func isConflict(stored: String, sent: String, inheriting: String?) -> Bool {
        stored != sent && stored != inheriting
    }

    public static let defaultMaxLiveActivities = 2_000_000

    /// Bounds memory by the number of live activities: past `maxLiveActivities`, the
    /// oldest-started go (down to 95 %, so that the next batch is far off). Only right after
    /// the tables caught up, so that what leaves memory is stored as memory had it. An event
    /// for one of them loads it back from its row; it is missing from the gauges and the wall.
    private func evictOverflow() {
        let gone = state.withLock { s in
            s.records.count > maxLiveActivities ? s.records.removeOldestStarted(downTo: maxLiveActivities / 100 * 95) : 0
        }
        guard gone > 0 else { return }
        evicted.wrappingAdd(gone, ordering: .relaxed)
        log("store: \(gone) oldest-started live activities left memory (--max-live-activities \(maxLiveActivities)); they are still stored")
    }

    /// Makes sure the tables catch up within the interval even if no commit follows.
    private func scheduleFlush(_ deferred: inout DeferredWrites) {
        guard !deferred.flushScheduled else { return }
        deferred.flushScheduled = true
        DispatchQueue.global().asyncAfter(deadline: .now() + deferred.interval) { [self] in enqueue(.sweep) }
    }

    /// Writes the row of every record the commit changed; returns their ids. A new record, or one
    /// whose dismissal changed, is written whole (for its index entries).
    static func writeRows(of changes: CommitChanges, at now: Double, _ db: Database) throws -> Set<ExactString> {
        var statements = RowStatements(db)
        let ids = changes.changedIDs
        for id in ids {
            let record = changes.working(id)!
            try statements.write(record, record.rowWrite(dismissalChanged: changes.dismissalChanged(id)))
        }
        return ids
    }

    /// Completes bringing the tables up to date once the commit's own rows are written: the
    /// rows left `behind` by earlier commits (from `changes`, or memory, which holds every live
    /// record), the counters that differ from `persisted`, and `applied_seq`.
    /// `named`: the activities the events since `applied_seq` name, or nil when not known.
    func writeBehind(_ behind: Set<ExactString>, _ changes: CommitChanges?, since persisted: MonitorCounters,
                     named: Set<ExactString>?, _ db: Database) throws {
        var statements = RowStatements(db)
        let records = state.withLock { s in behind.compactMap { changes?.working($0) ?? s.records[$0.text] } }
        for record in records { try statements.write(record, record.rowWrite(dismissalChanged: false)) }
        try Self.write(changes?.counters ?? state.withLock { $0.counters }, changedSince: persisted, to: db)
        try Self.advanceAppliedSeq(db, named: named)
    }

    /// Files the events stored since `applied_seq` under their activities: under the number of
    /// the activity's row (`activity_events_numbered`), or its id when it has no numbered row
    /// (`activity_events`); then moves `applied_seq` to the last event. The rows of this
    /// catch-up are written before it. `named`: the activities those events name, or more (nil:
    /// not known); when each of them has a numbered row, the second pass, which would look up
    /// every event's activity again to find none, is left out. Public for the benchmark's
    /// storage baseline.
    public static func advanceAppliedSeq(_ db: Database, named: Set<ExactString>?) throws {
        // In key order, each activity's last leaf is written once. (Keeping the entries in memory
        // instead of reading the events back read less but was no faster, and inserted one
        // statement each cost the writer more: A/B, PERFORMANCE.md, sessions 10 and 37.)
        try db.run("""
            INSERT INTO activity_events_numbered (number, seq)
            SELECT a.number, e.seq FROM events e JOIN activities a ON a.activity_id = e.activity_id
            WHERE e.seq > (SELECT applied_seq FROM store_state) AND a.number IS NOT NULL
            ORDER BY a.number, e.seq
            """)
        if try named.map({ try !allNumbered($0, db) }) ?? true {
            try db.run("""
                INSERT INTO activity_events (activity_id, seq)
                SELECT activity_id, seq FROM events e
                WHERE seq > (SELECT applied_seq FROM store_state) AND activity_id IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM activities a WHERE a.activity_id = e.activity_id AND a.number IS NOT NULL)
                ORDER BY activity_id, seq
                """)
        }
        try db.run("UPDATE store_state SET applied_seq = (SELECT coalesce(max(seq), 0) FROM events)")
    }

    /// The most events the writer stores before it brings the tables up to date (sooner once its
    /// catch-up interval has passed, and in any commit that starts an activity). Public for the
    /// benchmark's storage baseline, which files its rows as often.
    public static var eventsPerCatchUp: Int { DeferredWrites.maxEvents }

    /// Whether each of `activities` has a row with a number.
    private static func allNumbered(_ activities: Set<ExactString>, _ db: Database) throws -> Bool {
        let number = try db.cached("SELECT number FROM activities WHERE activity_id = ?")
        for id in activities {
            try number.bind(id.text, at: 1)
            defer { number.reset() }
            guard try number.step(), !number.isNull(0) else { return false }
        }
        return true
    }

    /// Stores the rows a commit writes beside its events (`CommitWrites`).
    static func write(_ writes: CommitWrites, _ db: Database) throws {
        // A broadcast files itself under each of its subscribers (10,000 rows for a big channel):
        // one statement, given their ids as one JSON array (a statement step per row cost a third
        // more). The other side rows are few: a cached one-call statement each.
        for (seq, receivers) in Dictionary(grouping: writes.receivers, by: \.seq) {
            let insert = try db.cached("""
                INSERT OR IGNORE INTO broadcast_receivers (activity_id, seq) SELECT value, ?2 FROM json_each(?1)
                """)
            defer { insert.reset() }
            try insert.bind(JSONValue.array(receivers.map { .string($0.activityID) }).jsonString, at: 1)
            try insert.bind(seq, at: 2)
            _ = try insert.step()
        }
        // The verdicts of undecodable pushes (half the bench's batched pushes): one statement
        // looked up for them all and bound directly (a lookup by its text and an array of values
        // a verdict had cost more than half of what its row costs SQLite).
        if !writes.verdicts.isEmpty {
            let insert = try db.cached("INSERT OR REPLACE INTO event_verdicts (seq, detail) VALUES (?, ?)")
            for (seq, detail) in writes.verdicts {
                try insert.bind(seq, at: 1)
                try insert.bind(detail, at: 2)
                _ = try insert.step()
                insert.reset()
            }
        }
        for (seq, type, detail) in writes.broadcastVerdicts {
            try db.run("INSERT OR REPLACE INTO broadcast_verdicts (seq, attributes_type, detail) VALUES (?, ?, ?)",
                       [.integer(seq), .text(type), .text(detail)])
        }
        for (type, shape) in writes.shapes {
            try db.run("INSERT OR REPLACE INTO content_shapes (attributes_type, shape) VALUES (?, ?)",
                       [.text(type), .text(JSONValue.object(shape.text).jsonString)])
        }
        for (id, channel) in writes.channels { try channel.write(id, db) }
        for (id, seq) in writes.channelEvents {
            try db.run("INSERT OR IGNORE INTO channel_events (channel_id, seq) VALUES (?, ?)", [.text(id), .integer(seq)])
        }
    }

    /// Makes a commit's changes what memory holds; the records of `rowsWritten`, whose rows the
    /// commit wrote (committed, or in the replay's transaction), let go what those hold.
    func publish(_ changes: inout CommitChanges, at now: Double, rowsWritten: Set<ExactString>) {
        state.withLock { s in
            s.publish(&changes, at: now)
            s.records.leaveToRows(of: rowsWritten)
        }
    }

    /// The stored text once `booking_id` is inherited: the member appended at the object's end
    /// (the text has none: `EventValidator.storedBody` leaves a null one out).
    public static func body(_ body: String, inheriting booking: String) -> String {
        var bytes: [UInt8] = []
        write(body, inheriting: booking, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `body(_:inheriting:)` as UTF-8 in `bytes`, which it empties first and whose capacity it
    /// keeps: the writer's, one buffer for a commit's events.
    static func write(_ body: String, inheriting booking: String, into bytes: inout [UInt8]) {
        // Copied a run at a time (a string's UTF-8 view is appended byte by byte).
        func append(_ text: String) {
            var text = text
            text.withUTF8 { bytes.append(contentsOf: $0) }
        }
        bytes.removeAll(keepingCapacity: true)
        append(body)
        bytes.removeLast()  // its closing brace
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        append("\"booking_id\":")
        // Most ids need no escaping; the JSON writer (an allocation per event) only for those that do.
        if JSONWriter.isVerbatim(booking) {
            bytes.append(UInt8(ascii: "\""))
            append(booking)
            bytes.append(UInt8(ascii: "\""))
        } else {
            append(JSONValue.string(booking).jsonString)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    static func unavailable(_ error: any Error) -> APIError {
        .unavailable(writeProblem(error) + "; nothing from this request was stored")
    }

    private static func write(_ counters: MonitorCounters, changedSince persisted: MonitorCounters, to db: Database) throws {
        let upsert = try db.cached("INSERT OR REPLACE INTO counters (key, value, histogram) VALUES (?, ?, ?)")
        for key in counters.changedSeries(since: persisted) {
            if let h = counters.histograms[key] {
                try upsert.bind(Double(h.count), at: 2)
                try upsert.bind(([String(h.sum)] + h.bucketCounts.map { String($0) }).joined(separator: ";"), at: 3)
            } else if counters.holds(key) {
                try upsert.bind(counters.counters[key]!, at: 2)
                try upsert.bindNull(at: 3)
            } else {
                // A series that ended (its attributes type lost its label).
                try db.run("DELETE FROM counters WHERE key = ?", [.text(key.storageKey)])
                continue
            }
            try upsert.bind(key.storageKey, at: 1)
            _ = try upsert.step()
            upsert.reset()
        }
    }

    // MARK: Opening

    private static func prepare(_ db: Database, durability: Durability) throws {
        // A file from a newer version is refused before anything here changes it (journal mode).
        try Schema.pendingMigrations(db)
        try Schema.refuseAnotherProgramsDatabase(db)
        if try db.userVersion == 0 {
            // Must precede the first table; lets `prune` give pages back to the file system.
            try db.execute("PRAGMA auto_vacuum = INCREMENTAL")
        }
        try db.execute("PRAGMA journal_mode = WAL")
        try db.execute("PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
        // The WAL keeps its high-water size after a checkpoint; this trims it back after a burst.
        try db.execute("PRAGMA journal_size_limit = \(Self.walSizeLimit)")
        try db.execute("PRAGMA foreign_keys = OFF")
        try db.migrate(Schema.migrations)
    }

    /// The writer's cache and checkpoint interval. A group commit dirties a leaf page per activity
    /// in each events index: with SQLite's 2 MiB default cache a large commit spilled pages to
    /// the WAL mid-transaction and read them back, and the default 1000-page WAL made nearly
    /// every commit a checkpoint (copy back + fsync). 8 MiB rather than 16: the same ingest
    /// rates with less peak memory (PERFORMANCE.md).
    static let writerCacheKiB = 8 * 1024
    static let walAutocheckpointPages = 4000

    /// Applies the writer's settings to `db` (public for the benchmark's storage baseline).
    public static func tuneWriter(_ db: Database) throws {
        try db.execute("PRAGMA cache_size = -\(writerCacheKiB)")
        try db.execute("PRAGMA wal_autocheckpoint = \(walAutocheckpointPages)")
    }

    /// A record as the writer knows it: memory holds every live one, the table the rest.
    /// One read from the table leaves its texts there, as memory's records do (`textsInRow`).
    func recordLoader(_ db: Database) -> (String) throws -> ActivityRecord? {
        { [self] id in try state.withLock({ $0.records[id] }) ?? Self.loadRecord(id, from: db, heldOnly: true) }
    }

    /// The texts of a record that left them to its row, for the engine's few reads of them
    /// (`StateEngine.readsTexts`): on the writer's connection, which sees every committed row.
    func textReader(_ db: Database) -> (String) throws -> StoredTexts? {
        { id in try Self.texts(of: [id], db)[ExactString(id)] }
    }

    /// The known contents a record's row holds, for the engine's one read of them
    /// (`StateEngine.readsKnown`): on the writer's connection, which sees every committed row.
    func knownReader(_ db: Database) -> (String) throws -> [DeliveryEvidence.Known] {
        { id in try Self.storedKnown(of: id, db) }
    }

    /// The known contents the row of `id` holds (none without a row).
    static func storedKnown(of id: String, _ db: Database) throws -> [DeliveryEvidence.Known] {
        let s = try db.cached("SELECT delivery FROM activities WHERE activity_id = ?")
        defer { s.reset() }
        try s.bind(id, at: 1)
        return try s.step() ? s.withBytes(0) { DeliveryEvidence(stored: $0) }.known : []
    }

    /// The activities in memory subscribed to a channel, from the table's index (a subscribed
    /// activity that left memory, evicted or dismissed, receives none).
    func subscriberFinder() -> (String) -> [(id: String, record: ActivityRecord)] {
        { [self] channel in state.withLock { $0.records.subscriberRecords(of: channel) } }
    }

    static func loadRecord(_ id: String, from db: Database, heldOnly: Bool = false) throws -> ActivityRecord? {
        let s = try db.cached((heldOnly ? ActivityRecord.selectHeldSQL : ActivityRecord.selectSQL)
                              + " WHERE activity_id = ?")
        defer { s.reset() }
        try s.bind(id, at: 1)
        return try s.step() ? ActivityRecord(row: s, heldOnly: heldOnly) : nil
    }
}
