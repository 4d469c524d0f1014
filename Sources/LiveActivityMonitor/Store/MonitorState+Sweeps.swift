import Synchronization

extension Mutex where Value == MonitorState {
    /// Sweeps until nothing is due at `now`, through `submit(.sweep)` (each sweep takes at most
    /// `ActivityTable.duePerCommit`), until a commit fails (the next commit retries) or every
    /// entry queued now has been taken: the one loop of both stores' writers.
    func sweepUntilNoneDue(at now: Double, submit: (WriteJob.Kind) -> Result<IngestSummary, APIError>) {
        let sweeps = withLock { $0.records.sweepsForQueuedDeadlines }
        for _ in 0..<sweeps {
            guard case .success = submit(.sweep) else { return }
            guard withLock({ $0.earliestDeadline > now }) else { continue }
            // The last due entries may be in a sweep the writer queued itself, still committing:
            // one more sweep, queued behind it, returns once it is done.
            if sweeps > 1 { _ = submit(.sweep) }
            return
        }
    }
}
