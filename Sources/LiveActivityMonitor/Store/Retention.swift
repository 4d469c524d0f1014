import Dispatch
import Foundation
import SQLiteDB
import Synchronization

/// Deletes old history: `serve --retention 30d` runs it periodically, `prune --older-than` once.
///
/// What goes: events that occurred before the cutoff, and activities dismissed before it (they
/// are no longer in memory). What stays: every counter (they live in the `counters` table,
/// which pruning never touches, so `/metrics` does not change) and every live activity.
///
/// It works on its own connection, in short transactions (`batch` rows each) separated by a
/// pause at least as long as the transaction, so the server's writer, which waits for the lock
/// with SQLite's busy handler, gets in between: ingest is delayed by one batch at most.
/// Afterwards `PRAGMA incremental_vacuum` (in chunks) gives freed pages back to the file system
/// and a checkpoint copies the WAL into the database file and truncates it, so the file stops
/// growing once the retention period is reached.
final class Retention: Sendable {
    /// Rows per transaction in the automatic pass: few, so that ingest waits for one short batch
    /// at most (measured under load: OPERATIONS.md, "Retention").
    static let automaticBatch = 1000
    /// The first automatic pass runs this long after start (or after the interval, if shorter).
    static let firstRunDelay = 60.0
    /// The retention connection waits this long for the lock before retrying: short, because a
    /// TRUNCATE checkpoint holds new writers back while it waits.
    static let busyTimeoutMilliseconds: Int32 = 200

    let path: String
    let age: Double
    let interval: Double
    let clock: Clock
    private let catchUp: @Sendable () -> Void
    private let log: @Sendable (String) -> Void
    private let stopping = Mutex(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = Gate()
    private let running = Mutex(false)

    /// - Parameters:
    ///   - age: events older than this many seconds (by `occurred_at`, on `clock`) are deleted.
    ///   - interval: seconds between automatic passes.
    ///   - catchUp: brings the server's current-state tables up to date, so that a pass can
    ///     delete every old event (it leaves those the tables do not include yet).
    init(path: String, age: Double, interval: Double, clock: Clock, catchUp: @escaping @Sendable () -> Void = {},
         log: @escaping @Sendable (String) -> Void) {
        self.catchUp = catchUp
        self.path = path
        self.age = age
        self.interval = interval
        self.clock = clock
        self.log = log
    }

    /// Starts the periodic passes on a thread of their own.
    func start() {
        running.withLock { $0 = true }
        Thread.start(named: "retention") { [self] in loop() }
    }

    /// Stops the periodic passes, interrupting a pass in progress between two transactions.
    /// Idempotent: a second caller, or one on another thread at once, returns once stopped too.
    func stop() {
        stopping.withLock { $0 = true }
        guard running.withLock({ $0 }) else { return }
        wake.signal()
        finished.wait()
    }

    private var isStopping: Bool { stopping.withLock { $0 } }

    private func loop() {
        var delay = min(interval, Self.firstRunDelay)
        while true {
            _ = wake.wait(timeout: .now() + delay)
            if isStopping { break }
            do {
                let result = try runOnce()
                if result.events > 0 || result.activities > 0 {
                    log("retention: pruned \(result.events) events and \(result.activities) dismissed activities "
                        + "older than \(Self.describe(age))")
                }
            } catch {
                log("retention: pass failed, will retry in \(Self.describe(interval)): \(error)")
            }
            delay = interval
        }
        finished.open()
    }

    /// One pass now, with the cutoff `age` seconds before the clock's now.
    @discardableResult
    func runOnce() throws -> (events: Int, activities: Int) {
        catchUp()
        let db = try Self.open(path)
        return try Self.prune(db, before: clock.now() - age, batch: Self.automaticBatch) { [self] in isStopping }
    }

    /// 2592000 → "30d", 5400 → "90m": the way `--retention` takes it.
    static func describe(_ seconds: Double) -> String {
        for (unit, size) in [("d", 86_400.0), ("h", 3600), ("m", 60)] where seconds >= size && seconds.truncatingRemainder(dividingBy: size) == 0 {
            return "\(Int(seconds / size))\(unit)"
        }
        return seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }

    /// A connection for pruning: short busy timeout, no fsync per batch (a lost delete is
    /// repeated by the next pass; WAL with `synchronous=NORMAL` never corrupts the file).
    /// Throws, as the store does, for a database written by a newer version (its schema
    /// version is past ours): its tables may mean something else now.
    static func open(_ path: String) throws -> Database {
        let db = try Database(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        try Schema.requireMonitorDatabase(db, path: path)
        try db.execute("PRAGMA synchronous = NORMAL")
        try db.execute("PRAGMA journal_size_limit = \(EventStore.walSizeLimit)")
        return db
    }

    /// Deletes events that occurred before `cutoff` and activities dismissed before it, `batch`
    /// rows per transaction; then vacuums and checkpoints. Returns the rows deleted.
    static func prune(_ db: Database, before cutoff: Double, batch: Int,
                      shouldStop: () -> Bool = { false }) throws -> (events: Int, activities: Int) {
        // Only events the current-state tables include (the server replays the rest after a
        // crash: `store_state`). SQLite numbers a new row after the highest left, so when the
        // highest go, `applied_seq` comes down with them, or it would cover events not applied.
        let tracked = try db.scalar("SELECT 1 FROM sqlite_master WHERE name = 'store_state'") != nil
        let events = try deleteInBatches(db, batch: batch, shouldStop: shouldStop, """
            DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE occurred_at < ?\(tracked ? " AND seq <= (SELECT applied_seq FROM store_state)" : "") LIMIT ?)
            """, cutoff, then: tracked ? "UPDATE store_state SET applied_seq = min(applied_seq, (SELECT coalesce(max(seq), 0) FROM events))" : nil)
        let activities = try deleteInBatches(db, batch: batch, shouldStop: shouldStop, """
            DELETE FROM activities WHERE activity_id IN
                (SELECT activity_id FROM activities WHERE dismissed_at IS NOT NULL AND dismissed_at < ? LIMIT ?)
            """, cutoff)
        if !shouldStop() { try giveBackSpace(db, shouldStop: shouldStop) }
        return (events, activities)
    }

    private static func deleteInBatches(_ db: Database, batch: Int, shouldStop: () -> Bool,
                                        _ sql: String, _ cutoff: Double, then: String? = nil) throws -> Int {
        var total = 0
        while !shouldStop() {
            let started = DispatchTime.now().uptimeNanoseconds
            let n = try write(db) {
                try db.run(sql, [.real(cutoff), .integer(Int64(batch))])
                let deleted = db.changes
                if let then { try db.run(then) }
                return deleted
            }
            total += n
            if n < batch { break }
            pause(since: started)
        }
        return total
    }

    /// Incremental vacuum in chunks, then a checkpoint that copies the WAL into the database file
    /// (which truncates the file to its new size) and empties the WAL.
    private static func giveBackSpace(_ db: Database, shouldStop: () -> Bool) throws {
        // 2 = INCREMENTAL; a database made before that setting has nothing to vacuum this way.
        if try db.scalar("PRAGMA auto_vacuum")?.int64Value == 2 {
            var free = try db.scalar("PRAGMA freelist_count")?.int64Value ?? 0
            while free > 0, !shouldStop() {
                let started = DispatchTime.now().uptimeNanoseconds
                let left = try write(db) { () throws -> Int64 in
                    try db.execute("PRAGMA incremental_vacuum(2000)")
                    return try db.scalar("PRAGMA freelist_count")?.int64Value ?? 0
                }
                if left >= free { break }
                free = left
                pause(since: started)
            }
        }
        // PASSIVE copies without holding anyone back; TRUNCATE then has little left to do. It
        // waits for readers (holding new writers back) only up to the short busy timeout.
        _ = try checkpoint(db, truncate: false)
        // The store's background checkpointer takes the checkpoint lock for a moment every
        // 50 ms, and SQLite answers busy at once rather than wait for it: try again a few times
        // (once in four passes left the WAL full until the next pass).
        var attempts = 1
        while try !checkpoint(db, truncate: true), attempts < 10 {
            attempts += 1
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// A checkpoint that may find another one running (the store's), or a reader on an old
    /// snapshot: then it returns false and the WAL stays (the writer's journal_size_limit keeps
    /// it bounded meanwhile). Any other failure is thrown.
    private static func checkpoint(_ db: Database, truncate: Bool) throws -> Bool {
        // (A `catch where` on this typed throw crashes the Swift 6.3.1 compiler: hence the Result.)
        if case .failure(let error) = Result(catching: { () throws(SQLiteError) in try db.checkpoint(truncate: truncate) }) {
            if error.isBusy { return false }
            throw error
        }
        return true
    }

    /// One write transaction, retried while another connection (the server's writer) holds the lock.
    private static func write<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        var attempts = 0
        while true {
            do {
                return try db.transaction(.immediate, body)
            } catch let error as SQLiteError where error.isBusy && attempts < 100 {
                attempts += 1
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    /// Sleeps as long as the last transaction took (at least 20 ms): the writer polls for the
    /// lock while it waits, and needs a window to find it free.
    private static func pause(since started: UInt64) {
        let took = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        Thread.sleep(forTimeInterval: max(took, 0.02))
    }
}
