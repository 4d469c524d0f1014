import PostgresDB
import Prometheus

/// What a standby replica reads (DESIGN.md section 9): one activity or one booking, with their
/// events, straight from the tables, which every commit of the leader brings up to date; the
/// same SQL as the leader's store (`PostgresEventStore`), without its memory. It keeps no state
/// and takes no events: `StandbyAnswers` routes only `/api/activities/{id}` and
/// `/api/bookings/{id}` to it (a list, a scrape or triage would need the leader's memory).
final class PostgresStandbyStore: Sendable, MonitorStore {
    let clock: Clock
    let settings: EngineSettings
    private let readers: PostgresConnectionPool

    init(uri: String, password: String?, clock: Clock, settings: EngineSettings) {
        self.clock = clock
        self.settings = settings
        readers = PostgresConnectionPool(maxIdle: 2) { try PostgresStoreDatabase.connect(uri: uri, password: password) }
    }

    func close() {
        readers.close()
    }

    static let refusal = "this replica is a standby: another one leads and takes events"

    func ingest(_ events: [Event]) -> Result<IngestSummary, APIError> { .failure(.unavailable(Self.refusal)) }

    func ingest(_ events: [Event], then: @escaping @Sendable (Result<IngestSummary, APIError>) -> Void) {
        then(.failure(.unavailable(Self.refusal)))
    }

    func countRejection(_ reason: MonitorMetrics.Rejection) {}

    /// No live activity in memory; the channels from the table, for replays to judge broadcasts
    /// as the leader does (none when the table cannot be read: the read itself then fails).
    func withLiveState<T>(_ body: (LiveState) -> T) -> T {
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
                          matching: (ActivityRecord) -> Bool) throws -> [ActivityRecord] { [] }

    func storedEvents(activityID: String) throws -> [StoredEventRow] {
        try readers.read { try PostgresEventStore.storedEvents(PostgresEventStore.activityEventsSQL, activityID, $0) }
    }

    func storedEvents(bookingID: String) throws -> [StoredEventRow] {
        try readers.read { try PostgresEventStore.storedEvents(PostgresEventStore.bookingEventsSQL, bookingID, $0) }
    }

    func storedEvents(channelID: String, limit: Int) throws -> [StoredEventRow] { [] }

    func judgedSuperseded(among rows: [StoredEventRow]) throws -> Set<Int64> {
        guard !rows.isEmpty else { return [] }
        return try readers.read { try PostgresEventStore.judgedSuperseded(among: rows, $0) }
    }

    static func unavailable(_ error: any Error) -> APIError { PostgresEventStore.unavailable(error) }

    func readinessProblem() -> String? { Self.refusal }
    var sizeBytes: Int64 { 0 }
    var commitDurations: HistogramValue { HistogramValue(upperBounds: MonitorMetrics.commitSeconds.buckets) }
    var evictedActivities: Int { 0 }
}
