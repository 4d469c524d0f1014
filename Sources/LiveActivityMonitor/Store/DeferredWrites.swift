import Dispatch
import Prometheus

/// What the writer has committed to the event log and memory but not yet to the current-state
/// and counters tables. A live activity's row is rewritten about four times a second, with the
/// counters, instead of in every commit: a group commit of single-event requests touched a row
/// per event, scattered over the table (without those writes the writer's CPU per event falls
/// and single-event ingest rises: PERFORMANCE.md). The events table stays the
/// record: `store_state.applied_seq` names the last event the tables include, and start-up
/// replays the events after it (`EventStore+Replay`).
///
/// A commit that must write a row at once (a new activity, a dismissal) brings the tables
/// up to date whole, so that they always hold the state as of `applied_seq`.
struct DeferredWrites {
    /// Live activities whose row is behind memory. Each has a row, with its current `dismissed_at`.
    var rows = Set<ExactString>()
    /// What the counters table holds.
    var counters: MonitorCounters
    /// Events stored since the tables were last brought up to date.
    var events = 0
    /// The activities those events name (more, after a commit that failed: never fewer), so
    /// that the catch-up knows whether any lacks a numbered row (`advanceAppliedSeq`).
    var named = Set<ExactString>()
    /// When they were (uptime nanoseconds).
    var flushedAt = DispatchTime.now().uptimeNanoseconds
    /// A `.sweep` is scheduled to bring them up to date if no commit does first.
    var flushScheduled = false

    /// How far the tables may fall behind: in seconds, in events to replay after a crash, and
    /// in rows to write at once (a commit that catches up holds back the requests in it).
    let interval: Double
    static let maxEvents = 20_000
    static let maxRows = 5_000

    init(counters: MonitorCounters, interval: Double) {
        self.counters = counters
        self.interval = interval
    }

    /// Whether a commit storing `events` more must bring the tables up to date.
    func isDue(adding events: Int) -> Bool {
        self.events + events >= Self.maxEvents || rows.count >= Self.maxRows
            || Double(DispatchTime.now().uptimeNanoseconds - flushedAt) / 1e9 >= interval
    }

    /// After a commit that brought the tables up to date.
    mutating func flushed(_ counters: MonitorCounters) {
        rows = []
        self.counters = counters
        events = 0
        named = []
        flushScheduled = false
        flushedAt = DispatchTime.now().uptimeNanoseconds
    }

    /// After a commit that left the rows of `changed` behind (and stored `events` events).
    mutating func deferred(_ changed: Set<ExactString>, events: Int) {
        rows.formUnion(changed)
        self.events += events
    }
}
