/// What one ingest request added: events newly stored, and those already stored under their id
/// — of which `conflicts` differ from what is stored (the stored one stays).
public struct IngestSummary: Sendable, Equatable {
    public var accepted = 0
    public var duplicates = 0
    public var conflicts = 0
    public init(accepted: Int = 0, duplicates: Int = 0, conflicts: Int = 0) {
        self.accepted = accepted
        self.duplicates = duplicates
        self.conflicts = conflicts
    }
}
