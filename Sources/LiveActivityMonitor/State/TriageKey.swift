/// A live activity's place in a triage group (`TriageIndex`, `GET /api/triage`): the most
/// recently started first, then by id (`<` on strings, as the table's index tells ids apart: no
/// two live ids are equal by it). The one statement of the triage page's order: the kept groups
/// and the walk (`ReadHandlers.walkedTriage`) both sort by it.
struct TriageKey: ChunkOrdered, Equatable {
    var startedAt: Double
    /// The record's own id, as it keeps it.
    var activityID: CompactID

    init(_ r: borrowing ActivityRecord) {
        startedAt = r.startedAt
        activityID = r.id
    }

    /// Whether `a` comes before `b` in a triage group.
    static func ordered(_ a: TriageKey, _ b: TriageKey) -> Bool {
        a.startedAt != b.startedAt ? a.startedAt > b.startedAt : a.activityID < b.activityID
    }
}
