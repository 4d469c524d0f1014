/// The live records that have each triage problem of an activity (`TriageProblem.of`: every
/// problem but `startNotStarted`, which belongs to start pushes), kept sorted in one set per
/// problem in the page's order (`TriageKey`), so that `GET /api/triage` reads its counts from the
/// sets' sizes and its items from their fronts instead of judging every record.
///
/// A record's problems are the ones it has as of the table's `gaugeTime`: `ActivityTable` moves
/// a record between sets on the same paths that count it in the gauges (its put and removal,
/// and the gauges brought forward by time, whose queue holds every instant at which its problems
/// may change: `TriageProblem.nextChange`), and a read at a later instant corrects for the
/// records that queue says may have changed since (`first(_:of:skipping:)` leaves them out; the
/// table adds them back by their problems at that instant). A record with no problem costs
/// nothing here.
struct TriageIndex: Sendable, Equatable {
    /// Per problem, in `TriageProblem.allCases` order (`startNotStarted`'s stays empty).
    private var sets = [SortedChunks<TriageKey>](repeating: SortedChunks(), count: TriageProblem.allCases.count)

    /// Where a record is kept at an instant: its key, in the sets of its problems then.
    struct Place: Equatable {
        var key: TriageKey
        /// Bit `TriageProblem.index` set for each problem `TriageProblem.of` finds.
        var problems: UInt16

        init(_ record: borrowing ActivityRecord, at time: Double, budget: Int) {
            key = TriageKey(record)
            problems = TriageProblem.bits(of: record, at: time, priority10Budget: budget)
        }

        func has(_ problem: Int) -> Bool { problems & (1 << problem) != 0 }
    }

    init() {}

    /// The sets of `records` as of `time`, built in bulk: one sort per problem.
    init(_ records: UnsafeBufferPointer<ActivityRecord>, at time: Double, budget: Int) {
        var keys = [[TriageKey]](repeating: [], count: sets.count)
        for i in records.indices {
            // A `Place` of each record, its problems first: most have none, and need no key.
            let problems = TriageProblem.bits(of: records[i], at: time, priority10Budget: budget)
            guard problems != 0 else { continue }
            let key = TriageKey(records[i])
            for p in keys.indices where problems & (1 << p) != 0 { keys[p].append(key) }
        }
        for p in keys.indices { sets[p] = SortedChunks(sorted: keys[p].sorted(by: TriageKey.ordered)) }
    }

    /// A record's change, the one way the sets change after a build: its key out of the sets of
    /// `old`'s problems and into those of `new`'s (nil: it was not kept, or is no longer). Most
    /// changes (an update of a record with no problem) move nothing.
    mutating func move(from old: Place?, to new: Place?) {
        guard old != new else { return }
        for p in sets.indices {
            let was = old.map { $0.has(p) } ?? false, now = new.map { $0.has(p) } ?? false
            if was, !now || old?.key != new?.key { sets[p].remove(old!.key) }
            if now, !was || old?.key != new?.key { sets[p].insert(new!.key) }
        }
    }

    /// How many records have the problem at `problem` (its `TriageProblem.index`).
    func count(of problem: Int) -> Int { sets[problem].count }

    /// Up to `limit` keys of the records with the problem at `problem`, in order, leaving out the
    /// ids in `skipping`: it costs the page and the ids skipped, not the set.
    func first(_ limit: Int, of problem: Int, skipping: Set<CompactID>) -> [TriageKey] {
        var out: [TriageKey] = []
        var p = SortedChunks<TriageKey>.Position(chunk: 0, index: 0)
        while out.count < limit, let key = sets[problem][p] {
            if !skipping.contains(key.activityID) { out.append(key) }
            p = sets[problem].position(after: p)
        }
        return out
    }

    /// Every set's keys, in order (tests compare a kept index with one built in bulk).
    var contents: [[TriageKey]] { sets.map(\.all) }

    static func == (a: TriageIndex, b: TriageIndex) -> Bool { a.contents == b.contents }
}
