import Prometheus

/// The live part of a store's state as a reader sees it, at one instant: what
/// `MonitorStore.withLiveState` hands to the activity list and the scrape.
///
/// Its members share storage with the store's (no record is copied to build it); it lives only
/// for the call, so that the writer, changing them after it, copies nothing either.
struct LiveState {
    /// The activities not yet dismissed. Read them in place (`ActivityTable.withRecords`).
    let records: ActivityTable
    /// Which attributes types have a series of their own.
    let labels: AttributesTypeLabels
    /// Each attributes type's content shape.
    let shapes: ContentShapes
    /// Devices with a current push-to-start token, per raw attributes type.
    let pushToStartTokens: [ExactString: Int]
    /// The start pushes of the last day that started nothing, oldest first (triage).
    let unstartedStarts: [PushToStartBook.Pending]
    /// The broadcast channels the store knows.
    let channels: ChannelBook
    private let committed: MonitorCounters
    private let notCommitted: MonitorCounters
    private let committing: MonitorCounters

    /// - Parameters:
    ///   - committed: the counters as the last commit left them.
    ///   - notCommitted: counts kept in memory and not yet in a commit (refused requests).
    ///   - committing: such counts that a commit in progress is writing.
    init(records: ActivityTable, labels: AttributesTypeLabels, shapes: ContentShapes = ContentShapes(judging: false),
         pushToStartTokens: [ExactString: Int] = [:], unstartedStarts: [PushToStartBook.Pending] = [],
         channels: ChannelBook = ChannelBook(), committed: MonitorCounters,
         notCommitted: MonitorCounters = MonitorCounters(), committing: MonitorCounters = MonitorCounters()) {
        self.records = records
        self.labels = labels
        self.shapes = shapes
        self.pushToStartTokens = pushToStartTokens
        self.unstartedStarts = unstartedStarts
        self.channels = channels
        self.committed = committed
        self.notCommitted = notCommitted
        self.committing = committing
    }

    /// The counters as `/metrics` shows them: the committed ones plus what is counted and not
    /// committed yet, so that no counter reads lower while a commit runs.
    var counters: MonitorCounters {
        var counters = committed
        counters.add(notCommitted)
        counters.add(committing)
        return counters
    }
}
