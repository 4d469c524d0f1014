import Prometheus

/// Where the monitor keeps its events and the state they lead to, as the handlers and `/metrics`
/// use it: the seam between HTTP and storage (DESIGN.md section 8). `buildMonitor` builds the
/// router over it. `EventStore` (SQLite, embedded), `PostgresEventStore` (the leader over
/// PostgreSQL) and `PostgresStandbyStore` (a standby's snapshot) implement it, so nothing here
/// names a storage engine.
///
/// Safe for concurrent use: libmicrohttpd calls handlers on each of its polling threads, so every
/// requirement may be called from several threads at once; the HTTP path never blocks on a
/// write (it ingests with a completion), though in-process callers may. An implementation does its own locking; no caller holds a lock
/// across calls, and nothing a caller does inside `withLiveState` may call the store again.
/// Handlers call it a few times per request, never per event: the events of a request go in
/// one `ingest` call.
protocol MonitorStore: Sendable {
    /// Where "now" comes from for a read or a scrape: the clock the store's engine lets time
    /// pass with (stale dates, the 8 h end), so that an answer at "now" agrees with what the
    /// writer applies at that instant.
    var clock: Clock { get }

    // MARK: Writes

    /// Validated events of one request, stored whole or not at all and applied to the state
    /// (`StateEngine`); returns once they are durable, with what was new and what duplicated.
    /// A store that cannot write answers `.unavailable` (503) and keeps nothing of the request.
    func ingest(_ events: [Event]) -> Result<IngestSummary, APIError>

    /// The same, without waiting: `then` is told the outcome, in commit order, from the writer
    /// once the events are durable (or refused). It must be short and must not call the store.
    func ingest(_ events: [Event], then: @escaping @Sendable (Result<IngestSummary, APIError>) -> Void)

    /// Counts a request refused before its events reached the store
    /// (`liveactivity_ingest_rejected_total`). Must not wait for a write: refusals come in floods.
    func countRejection(_ reason: MonitorMetrics.Rejection)

    // MARK: Reads

    /// Runs `body` on the live part of the state (activities not yet dismissed, the label set,
    /// the counters), all as of one instant, for the list and the scrape. Keep `body` short and
    /// proportional to the live fleet: the writer may wait for it.
    func withLiveState<T>(_ body: (LiveState) -> T) -> T

    /// Fills, from their rows, the texts that live records copied out of `withLiveState` left
    /// to them (`ActivityRecord.textsInRow`), for a page that shows them; outside the state
    /// lock, in one read for the page.
    func fillTexts(_ records: inout [ActivityRecord]) throws

    /// One activity, live or not, or nil if it was never seen (`/api/activities/{id}`), with
    /// its texts.
    func record(_ activityID: String) throws -> ActivityRecord?

    /// Every activity of a booking, in start order (`/api/bookings/{id}`), with their texts.
    func records(bookingID: String) throws -> [ActivityRecord]

    /// Dismissed activities (not live: not in `withLiveState`), newest start first and ties by
    /// id, after `after`, up to `limit` of those `matching` (`/api/activities?state=dismissed`).
    func dismissedRecords(limit: Int, after: (startedAt: Double, activityID: String)?,
                          matching: (ActivityRecord) -> Bool) throws -> [ActivityRecord]

    /// An activity's stored events in `occurred_at` order, ties in arrival order: the read
    /// answers' events and the input of a replay (`?at=`).
    func storedEvents(activityID: String) throws -> [StoredEventRow]

    /// A booking's stored events (those naming it and those of its activities), in the same order.
    func storedEvents(bookingID: String) throws -> [StoredEventRow]

    /// The newest `limit` stored events that name `channelID` and no activity (its requests and
    /// broadcasts), in `occurred_at` order, ties in arrival order (`/api/channels/{id}`).
    func storedEvents(channelID: String, limit: Int) throws -> [StoredEventRow]

    /// Which of `rows` are start pushes judged `superseded_token` when they were stored: a
    /// replay cannot judge them (the device events that decided it are not the booking's).
    func judgedSuperseded(among rows: [StoredEventRow]) throws -> Set<Int64>

    /// The rules' settings the writer applies, for replays to apply alike.
    var settings: EngineSettings { get }

    /// A read that threw, as the client is told: 503 with what an operator can act on (never
    /// the values the query held).
    static func unavailable(_ error: any Error) -> APIError

    // MARK: Operations

    /// Why the store cannot take writes now (`/-/ready` answers 503 with it), or nil when ready.
    /// Cheap when healthy: it is asked on every probe.
    func readinessProblem() -> String?

    /// The bytes the store occupies (`liveactivity_store_size_bytes`).
    var sizeBytes: Int64 { get }

    /// How long the store's commits took (`liveactivity_store_commit_seconds`).
    var commitDurations: HistogramValue { get }

    /// Live activities taken out of memory since start, beyond `--max-live-activities`.
    var evictedActivities: Int { get }
}

extension MonitorStore {
    /// The PostgreSQL stores (serving and standby) keep the texts in memory as they came, as
    /// before issue 24 item 4 (not done there yet: docs/ARCHITECTURE.md): their records never
    /// leave them to the rows, so there is nothing to fill. The SQLite store has its own.
    func fillTexts(_ records: inout [ActivityRecord]) throws {}
}
