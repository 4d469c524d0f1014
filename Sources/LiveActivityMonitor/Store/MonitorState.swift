import Prometheus

/// What the server keeps in memory: live activities (not yet dismissed), the persisted counters
/// and the attributes-type label set. Gauges and the read API are computed from it; the writer
/// replaces parts of it only after a commit.
struct MonitorState: Sendable {
    var records = ActivityTable()
    var counters = MonitorCounters()
    var labels = AttributesTypeLabels()
    /// Each attributes type's content shape (declared, or learned from the app).
    var shapes = ContentShapes(judging: true)
    /// The push-to-start book (`PushToStartBook`). Only the writer reads it: a commit takes it
    /// (`takeStarts`) and `publish` gives it back, so that it changes in place, never copied.
    var starts = PushToStartBook()
    /// The broadcast channels (`ChannelBook`): a commit works on a copy and publishes it.
    var channels = ChannelBook()
    /// What readers need of it: when its next start window runs out, and the devices with a
    /// current push-to-start token per raw attributes type.
    var startDeadline: Double?
    var pushToStartTokens: [ExactString: Int] = [:]
    /// The start pushes of the last day that started nothing (triage).
    var unstartedStarts: [PushToStartBook.Pending] = []
    /// Counts not yet written (refused requests, which never reach the writer's transaction).
    var unpersisted = MonitorCounters()
    /// Such counts a commit in progress is writing: still shown until `counters` holds them, so
    /// that no counter reads lower while the commit runs.
    var persisting = MonitorCounters()
    /// A commit is queued (or timed) to write `unpersisted`.
    var flushQueued = false
    /// When the last such commit was queued (uptime seconds).
    var lastFlush = -Double.infinity
    /// When label slots were last given from unused types to waiting ones (clock seconds).
    var labelsExpiredAt = -Double.infinity
    /// The series start-up found of types without a label (`assignLabels`): left out of
    /// `counters`, still in the table until the writer's first catch-up deletes them.
    var droppedOnLoad = MonitorCounters()

    /// The live part as a reader sees it (`MonitorStore.withLiveState`), sharing this state's storage.
    var live: LiveState {
        LiveState(records: records, labels: labels, shapes: shapes, pushToStartTokens: pushToStartTokens,
                  unstartedStarts: unstartedStarts, channels: channels, committed: counters,
                  notCommitted: unpersisted, committing: persisting)
    }

    /// When time alone next changes something: an activity's deadline or a start window's end.
    var earliestDeadline: Double {
        min(records.earliestDeadline ?? .infinity, startDeadline ?? .infinity)
    }

    /// When the writer next wakes by itself: at the earliest deadline, or when time alone next
    /// changes the gauges (a scheduled start, a priority-10 minute), which it brings forward
    /// without a commit (`passTime`).
    var nextWake: Double {
        min(earliestDeadline, records.nextGaugeChange ?? .infinity)
    }

    /// Brings the gauges forward to `now`, and says whether a deadline is due (a sweep commits
    /// what time changed).
    mutating func passTime(to now: Double) -> Bool {
        records.advanceGauges(to: now)
        return earliestDeadline <= now
    }

    mutating func takeStarts() -> PushToStartBook {
        defer { starts = PushToStartBook() }
        return starts
    }

    mutating func publish(_ book: PushToStartBook) {
        starts = book
        startDeadline = book.earliestDeadline
        pushToStartTokens = book.tokenCounts
        unstartedStarts = book.unstarted
    }

    /// At most once a minute, while types wait for a label slot: the slots of types that no
    /// live activity uses go to them (a walk of the live records, so not on every commit), and
    /// the series of the types that gave theirs up end: the next catch-up deletes their rows
    /// (they are gone from `counters`, not from what the table holds).
    mutating func expireLabels(now: Double) {
        guard !labels.waiting.isEmpty, now - labelsExpiredAt >= 60 else { return }
        labelsExpiredAt = now
        var inUse = Set<ExactString>()
        records.withRecords { records in
            for record in records where record.state(at: now) != .dismissed { inUse.insert(ExactString(record.attributesType)) }
        }
        _ = counters.removeSeries(ofTypes: labels.expire(inUse: inUse))
    }

    /// What the `counters` table holds once loaded, for the writer to compare its commits with
    /// (so that its first catch-up deletes the rows of `droppedOnLoad`). Called once, by the writer.
    mutating func takeTableCounters() -> MonitorCounters {
        var table = counters
        table.add(droppedOnLoad)
        droppedOnLoad = MonitorCounters()
        return table
    }

    /// Keeps `record` if it is still on a lock screen at `now` (the table schedules its next
    /// deadline).
    mutating func publish(_ record: consuming ActivityRecord, now: Double) {
        if record.state(at: now) == .dismissed {
            records[record.activityID] = nil
            return
        }
        records.put(consume record)
    }
}
