/// What the phone's order needs of a live activity: relevance score (highest first; none counts
/// as 0), then the most recently started, then id (`<` on their text, as the table's index tells
/// ids apart: no two live ids are equal by it). The one statement of that order: the list's
/// cursor is such a key, and the records (`ActivityRecord.phoneOrder`), the search's keys and
/// the kept order (`PhoneOrderIndex`) compare by it.
struct PhoneOrderKey: ChunkOrdered, Equatable {
    var relevance: Double
    var startedAt: Double
    /// The record's own id, as it keeps it.
    var activityID: CompactID

    init(relevance: Double, startedAt: Double, activityID: CompactID) {
        self.relevance = relevance
        self.startedAt = startedAt
        self.activityID = activityID
    }

    init(_ r: borrowing ActivityRecord) {
        self.init(relevance: Self.relevance(of: r), startedAt: r.startedAt, activityID: r.id)
    }

    /// The relevance `r` is ordered by: none counts as 0.
    static func relevance(of r: borrowing ActivityRecord) -> Double { r.relevanceScore ?? 0 }

    /// Whether `a` comes before `b` in phone order.
    static func ordered(_ a: PhoneOrderKey, _ b: PhoneOrderKey) -> Bool {
        if a.relevance != b.relevance { return a.relevance > b.relevance }
        if a.startedAt != b.startedAt { return a.startedAt > b.startedAt }
        return a.activityID < b.activityID
    }
}
