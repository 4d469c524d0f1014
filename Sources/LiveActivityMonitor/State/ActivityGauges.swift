import Prometheus

/// The gauges that count live activities (`liveactivity_activities`, `…_channel_subscriptions`,
/// `…_priority10_heavy_activities`), kept as records change instead of recounted per scrape.
///
/// `contribution(of:at:budget:)` is the one rule saying what a record adds to them at an
/// instant; `ActivityTable` subtracts a record's contribution and adds its replacement's through
/// `count`, and `recount` adds every record's (the fallback, and the tests' oracle). Counts are
/// kept per raw attributes type: which types have a label of their own changes without any
/// record changing, so the scrape groups types into labels.
struct ActivityGauges: Sendable, Equatable {
    /// One raw attributes type's counts.
    struct Counts: Sendable, Equatable {
        /// By state, in the order of `ActivityState.counted` (active, stale, ended, pending).
        var states = SIMD4<Int>(repeating: 0)
        /// Those subscribed to a channel (`ActivityRecord.isSubscribed`).
        var subscribed = 0
    }

    /// What one record adds to the gauges at an instant.
    struct Contribution: Equatable {
        /// Its state's place in `ActivityState.counted`; nil when it counts nowhere (dismissed).
        var state: Int?
        var subscribed: Bool
        var heavy: Bool
    }

    /// `--priority10-budget`: the heavy gauge counts the activities above it.
    let priority10Budget: Int
    /// Only types some record counts in (an entry goes when its counts fall to zero).
    private(set) var byType: [ExactString: Counts] = [:]
    private(set) var heavy = 0

    init(priority10Budget: Int) {
        self.priority10Budget = priority10Budget
    }

    /// The rule: what `record` adds to the gauges at `now`, by the rules the read API states
    /// per activity (`state(at:)`, `isSubscribed(at:)`, `isPriority10Heavy(at:budget:)`).
    static func contribution(of record: borrowing ActivityRecord, at now: Double, budget: Int) -> Contribution {
        let state: Int? = switch record.state(at: now) {
        case .active: 0
        case .stale: 1
        case .ended: 2
        case .pending: 3
        case .dismissed: nil
        }
        return Contribution(state: state, subscribed: record.isSubscribed(at: now),
                            heavy: record.isPriority10Heavy(at: now, budget: budget))
    }

    /// The first instant after `now` at which `record`'s contribution may change with no event:
    /// every instant `state(at:)` compares the time with, and, while it is over the budget, the
    /// next minute (its priority-10 count changes only at minute boundaries). Nil when it cannot
    /// change again: dismissed is for good.
    static func nextChange(of record: borrowing ActivityRecord, after now: Double, budget: Int) -> Double? {
        if record.state(at: now) == .dismissed { return nil }
        var next = Double.infinity
        func consider(_ t: Double?) {
            if let t, t > now, t < next { next = t }
        }
        consider(record.dismissedAt)
        consider(record.endedAt)
        consider(record.systemEndAt)
        consider(record.visibleUntil ?? record.systemEndAt + LockScreenRules.maxEndedVisibility)
        consider(record.liveFrom)
        consider(record.staleDate)
        if record.priority10.total > budget { consider(record.priority10.nextChange(after: now)) }
        return next.isFinite ? next : nil
    }

    /// Adds (`sign` 1) or takes away (`sign` -1) `record`'s contribution at `now`.
    mutating func count(_ record: borrowing ActivityRecord, at now: Double, _ sign: Int) {
        count(Self.contribution(of: record, at: now, budget: priority10Budget), type: record.attributesType, sign)
    }

    /// Adds or takes away a contribution (`contribution(of:at:budget:)`, at this budget) of a
    /// record of attributes type `type`.
    mutating func count(_ c: Contribution, type: String, _ sign: Int) {
        // Subscribed and heavy activities are counted by state too: nothing else to add.
        guard c.state != nil else { return }
        let key = ExactString(type)
        var counts = byType.removeValue(forKey: key) ?? Counts()
        count(c, in: &counts, sign)
        if counts != Counts() { byType[key] = counts }
    }

    /// The same, given its type's counts.
    private mutating func count(_ c: Contribution, in counts: inout Counts, _ sign: Int) {
        guard let state = c.state else { return }
        if c.heavy { heavy += sign }
        counts.states[state] += sign
        if c.subscribed { counts.subscribed += sign }
    }

    /// Every record's contribution at `now`, counted afresh.
    static func recount(_ table: ActivityTable, at now: Double, budget: Int) -> ActivityGauges {
        var gauges = ActivityGauges(priority10Budget: budget)
        // Counted by type number first (`RecordTypes`: no type made or hashed per record).
        var types = RecordTypes(), byNumber: [Counts] = []
        table.withRecords { records in
            for i in records.indices {
                // Read before the counts change: a record borrowed across that change (as
                // `count(_:at:_:)` borrows it) is first copied whole, its references retained.
                let c = contribution(of: records[i], at: now, budget: budget)
                let type = types.number(of: records, i)
                if type == byNumber.count { byNumber.append(Counts()) }
                gauges.count(c, in: &byNumber[type], 1)
            }
        }
        for (type, counts) in zip(types.types, byNumber) where counts != Counts() { gauges.byType[type] = counts }
        return gauges
    }
}
