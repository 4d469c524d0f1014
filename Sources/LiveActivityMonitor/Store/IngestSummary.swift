/// What one ingest request added: events newly stored, and those already stored under their id.
public struct IngestSummary: Sendable, Equatable {
    public var accepted = 0
    public var duplicates = 0
    public init(accepted: Int = 0, duplicates: Int = 0) {
        self.accepted = accepted
        self.duplicates = duplicates
    }
}
