import Prometheus

/// The SQLite store is the monitor's store (`MonitorStore`): its writes, reads and health are
/// in `EventStore.swift`, `EventStore+Reads.swift` and `EventStore+Health.swift`.
extension EventStore: MonitorStore {
    func withLiveState<T>(_ body: (LiveState) -> T) -> T {
        state.withLock { body($0.live) }
    }

    var commitDurations: HistogramValue { commitSeconds.withLock { $0 } }
    var evictedActivities: Int { evicted.load(ordering: .relaxed) }
}
