/// What a monitor's store has done so far, read from its `/metrics`: events stored and commits
/// (`Benchmark.storeProgress(port:)`). A storage limit stores a round's events in transactions of
/// the round's mean commit: SQLite's and PostgreSQL's cost a row depends on it.
struct StoreProgress: Equatable {
    var events: Int
    var commits: Int

    /// What the store did between `earlier` and this reading.
    func since(_ earlier: StoreProgress) -> StoreProgress {
        StoreProgress(events: events - earlier.events, commits: commits - earlier.commits)
    }

    /// Events per commit, whole (a round without a counted commit counts as one).
    var eventsPerCommit: Int { events / max(commits, 1) }
}
