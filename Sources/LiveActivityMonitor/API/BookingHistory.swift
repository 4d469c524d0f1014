import Prometheus
/// What a booking's answers are made of, gathered one way for the read API, its files and
/// `history`: the booking's activities and events, and the activities of another booking that
/// its events name (a backend that sent another booking's id with an activity's push, as after
/// a ride is booked again under a new id). Those activities' events are replayed whole, so that
/// the booking's events about them say what they did rather than nothing.
struct BookingHistory {
    /// The booking's activities, then the others its events name.
    let records: [ActivityRecord]
    /// The booking's events: what its answers list.
    let rows: [StoredEventRow]
    /// What the replay runs over: those, and every event of the other activities.
    let replayed: [StoredEventRow]
    /// The activities a replay cannot rebuild: their start is no longer stored (pruned).
    let notReplayed: Set<ExactString>

    /// - Parameters:
    ///   - records: the activities under the booking; `rows`, its events.
    ///   - record: an activity by id, nil if never started.
    ///   - events: every stored event of an activity.
    init(records booked: [ActivityRecord], rows: [StoredEventRow], record: (String) throws -> ActivityRecord?,
         events: (String) throws -> [StoredEventRow]) rethrows {
        var records = booked, replayed = rows, seqs = Set(rows.map(\.seq))
        // By bytes, as the tables: canonically equivalent ids are two activities.
        let bookedIDs = Set(booked.map { ExactString($0.activityID) })
        for id in Set(rows.compactMap { $0.activityID.map(ExactString.init) }).subtracting(bookedIDs).sorted() {
            guard let other = try record(id.text) else { continue }
            records.append(other)
            for row in try events(id.text) where seqs.insert(row.seq).inserted { replayed.append(row) }
        }
        self.records = records
        self.rows = rows
        self.replayed = replayed
        notReplayed = Set(records.filter { !HistoryReplay.startIsStored($0, in: replayed) }.map { ExactString($0.activityID) })
    }
}
