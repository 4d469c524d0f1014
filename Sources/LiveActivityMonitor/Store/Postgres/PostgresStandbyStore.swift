import Dispatch
import Foundation
import PostgresDB
import Prometheus
import Synchronization

/// What a standby replica reads (DESIGN.md section 9), read-only: the monitor's router over it
/// answers the whole read API and the dashboard as the leader does, and it takes no events.
///
/// - The live state (lists, search, triage, channels, shapes) comes from a snapshot: the state
///   the leader would rebuild at takeover (`PostgresStateLoader.loadServing`, in one read-only
///   transaction, so one instant of the tables), loaded again `refreshInterval` seconds after
///   each load ends, or twice as long as that load took when longer (`pause(after:every:)`), on a
///   thread of its own (`startRefreshing`), one load at a time. A failed load keeps the
///   last snapshot. Until the first one is in, `hasSnapshot` is false (`StandbyAnswers`
///   answers those routes 503).
/// - One activity, one booking, their events and the dismissed activities are read from the
///   tables, which every commit of the leader brings up to date, with the leader store's own
///   SQL (`PostgresEventStore`'s static reads).
/// - Every write is refused: 503, nothing stored.
///
/// A snapshot costs what the leader's state costs (memory and a load as long as a takeover's),
/// twice while the next one loads; it is dropped (`stopRefreshing`) before this replica builds
/// the leader's state.
final class PostgresStandbyStore: Sendable, MonitorStore {
    let clock: Clock
    let settings: EngineSettings
    let refreshInterval: Double
    private let readers: PostgresConnectionPool
    private let load: @Sendable (PostgresConnection) throws -> MonitorState
    /// The snapshot and when it was loaded (uptime nanoseconds).
    private let snapshot = Mutex<(state: MonitorState, loadedAt: UInt64)?>(nil)
    private let refresh = Mutex<RefreshRun?>(nil)
    private let failing = Atomic(false)
    private let log: @Sendable (String) -> Void
    /// Failed loads, one every `refreshInterval` while the database is away: a few a minute.
    private let failureLog: LogThrottle

    init(uri: String, password: String?, clock: Clock, settings: EngineSettings, reservedTypes: [String] = [],
         declaredShapes: [String: ObjectShape] = [:], maxLiveActivities: Int = EventStore.defaultMaxLiveActivities,
         refreshInterval: Double = 2, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.clock = clock
        self.settings = settings
        self.refreshInterval = refreshInterval
        self.log = log
        failureLog = LogThrottle(limit: 3, clock: .system, write: log)
        readers = PostgresConnectionPool(maxIdle: 2) { try PostgresStoreDatabase.connect(uri: uri, password: password) }
        load = { db in
            try db.transaction {
                // Every query of the load sees the same commits of the leader.
                try db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                return try PostgresStateLoader.loadServing(db, reservedTypes: reservedTypes, declaredShapes: declaredShapes,
                                                           maxLiveActivities: maxLiveActivities,
                                                           priority10Budget: settings.priority10Budget, now: clock.now())
            }
        }
    }

    /// Stops refreshing (dropping the snapshot) and closes the connections.
    func close() {
        stopRefreshing()
        readers.close()
    }

    // MARK: The snapshot

    /// Whether a snapshot is in: the routes that read the live state answer from it.
    var hasSnapshot: Bool { snapshot.withLock { $0 != nil } }

    /// Loads the snapshot now, and again `pause(after:every:)` seconds after each load ends, until
    /// `stopRefreshing`. Does nothing when already refreshing.
    func startRefreshing() {
        let run = RefreshRun()
        let started = refresh.withLock { r in
            guard r == nil else { return false }
            r = run
            return true
        }
        guard started else { return }
        Thread.start(named: "standby-reload") { [self] in
            var pause = refreshInterval
            repeat { pause = Self.pause(after: reload(), every: refreshInterval) }
                while run.wake.wait(timeout: .now() + pause) == .timedOut
            run.stopped.signal()
        }
    }

    /// Stops refreshing (after a load in progress ends) and drops the snapshot. Returns whether
    /// it was refreshing.
    @discardableResult
    func stopRefreshing() -> Bool {
        guard let run = refresh.withLock({ $0.take() }) else { return false }
        run.wake.signal()
        run.stopped.wait()
        // Freed here, not under the lock.
        let dropped = snapshot.withLock { $0.take() }
        _ = dropped
        return true
    }

    /// How long to wait after a load that took `seconds` before the next: `refreshInterval`, or
    /// twice the load when longer, so that a standby spends at most a third of a processor on
    /// its snapshot however many live activities there are (a load of 1,000,000 takes seconds).
    static func pause(after seconds: Double, every refreshInterval: Double) -> Double {
        max(refreshInterval, 2 * seconds)
    }

    /// One load; the new snapshot replaces the last, or, when it fails, the last stays. Returns
    /// how long it took, in seconds.
    private func reload() -> Double {
        let started = DispatchTime.now().uptimeNanoseconds
        func took() -> Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        let fresh: MonitorState
        do {
            fresh = try readers.read(load)
        } catch {
            failing.store(true, ordering: .relaxed)
            let age = snapshot.withLock { $0.map { (started &- $0.loadedAt) / 1_000_000_000 } }
            failureLog("standby: the state could not be read from the tables (\(Self.problem(error))); "
                       + (age.map { "the lists answer from the snapshot of \($0) s ago" } ?? "the lists answer 503")
                       + "; trying again in \(Self.seconds(Self.pause(after: took(), every: refreshInterval))) s")
            return took()
        }
        let count = fresh.records.count
        let previous = snapshot.withLock { s in
            defer { s = (fresh, started) }
            return s
        }
        if previous == nil || failing.exchange(false, ordering: .relaxed) {
            let ms = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
            log("standby: state read from the tables in \(ms) ms (\(count) live activities); the read API and the "
                + "dashboard answer from it, read again \(Self.seconds(Self.pause(after: took(), every: refreshInterval))) s after each read")
        }
        return took()
    }

    private static func problem(_ error: any Error) -> String {
        guard let e = error as? PostgresError else { return "\(error)" }
        return e.isConnectionFailure ? "the PostgreSQL server cannot be reached: \(e.message)" : e.description
    }

    private static func seconds(_ interval: Double) -> String {
        interval == interval.rounded() ? String(Int(interval)) : String((interval * 10).rounded() / 10)
    }

    // MARK: Writes: refused

    static let refusal = "this replica is a standby: another one leads and takes events"

    func ingest(_ events: [Event]) -> Result<IngestSummary, APIError> { .failure(.unavailable(Self.refusal)) }

    func ingest(_ events: [Event], then: @escaping @Sendable (Result<IngestSummary, APIError>) -> Void) {
        then(.failure(.unavailable(Self.refusal)))
    }

    /// Refusals are counted by the leader only (domain metrics come from it).
    func countRejection(_ reason: MonitorMetrics.Rejection) {}

    // MARK: Reads

    /// The snapshot's live state. Without one (before the first load, or once dropped), no
    /// live activity, and the channels from the table, for the one-activity reads to judge
    /// broadcasts as the leader does (none when the table cannot be read: the read itself then
    /// fails).
    func withLiveState<T>(_ body: (LiveState) -> T) -> T {
        // The snapshot is never changed, only replaced: read outside the lock.
        if let s = snapshot.withLock({ $0?.state }) { return body(s.live) }
        let channels = (try? readers.read { try PostgresChannels.load($0) }) ?? ChannelBook()
        return body(LiveState(records: ActivityTable(), labels: AttributesTypeLabels(), channels: channels,
                              committed: MonitorCounters()))
    }

    func record(_ activityID: String) throws -> ActivityRecord? {
        try readers.read { try PostgresStateLoader.record(activityID, $0) }
    }

    func records(bookingID: String) throws -> [ActivityRecord] {
        try readers.read { try PostgresEventStore.records(bookingID: bookingID, $0) }
    }

    func dismissedRecords(limit: Int, after: (startedAt: Double, activityID: String)?,
                          matching: (ActivityRecord) -> Bool) throws -> [ActivityRecord] {
        try PostgresEventStore.dismissedRecords(limit: limit, after: after, matching: matching, readers)
    }

    func storedEvents(activityID: String) throws -> [StoredEventRow] {
        try readers.read { try PostgresEventStore.storedEvents(activityID: activityID, $0) }
    }

    func storedEvents(bookingID: String) throws -> [StoredEventRow] {
        try readers.read { try PostgresEventStore.storedEvents(bookingID: bookingID, $0) }
    }

    func storedEvents(channelID: String, limit: Int) throws -> [StoredEventRow] {
        try readers.read { try PostgresEventStore.storedEvents(channelID: channelID, limit: limit, $0) }
    }

    func judgedSuperseded(among rows: [StoredEventRow]) throws -> Set<Int64> {
        guard !rows.isEmpty else { return [] }
        return try readers.read { try PostgresEventStore.judgedSuperseded(among: rows, $0) }
    }

    static func unavailable(_ error: any Error) -> APIError { PostgresEventStore.unavailable(error) }

    // MARK: Operations (a standby's `/-/ready` and `/metrics` are `StandbyAnswers`')

    func readinessProblem() -> String? { Self.refusal }
    var sizeBytes: Int64 { 0 }
    var commitDurations: HistogramValue { HistogramValue(upperBounds: MonitorMetrics.commitSeconds.buckets) }
    var evictedActivities: Int { 0 }
}

/// One run of the refresh thread: woken to stop, and says when it has.
private final class RefreshRun: Sendable {
    let wake = DispatchSemaphore(value: 0)
    let stopped = DispatchSemaphore(value: 0)
}
