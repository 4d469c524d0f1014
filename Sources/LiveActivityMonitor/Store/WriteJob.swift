import Dispatch
import SQLiteDB
import Synchronization

/// One unit of work for the single writer, and the handle its submitter waits on.
final class WriteJob: Sendable {
    enum Kind: Sendable {
        case ingest([Event])
        /// Apply what time alone changes (stale dates, 8 h ends, dismissals) and persist it.
        case sweep
        /// Prove the store can write again (see `EventStore+Health.swift`); never batched with writes.
        case probe
        /// Run `body` with the writer's connection, outside any transaction (test hooks such as
        /// `PRAGMA max_page_count`, which is per connection).
        case withConnection(@Sendable (Database) throws -> Void)

        /// Runs alone on the writer's connection instead of joining the group commit.
        var isMaintenance: Bool {
            switch self {
            case .ingest, .sweep: false
            case .probe, .withConnection: true
            }
        }
    }

    let kind: Kind
    private let outcome = Mutex<Result<IngestSummary, APIError>?>(nil)
    private let done: DispatchSemaphore?
    /// Told the outcome on the writer's thread, for a submitter that does not wait (`wait` then
    /// must not be called): the HTTP layer resumes the suspended request from there.
    private let then: (@Sendable (Result<IngestSummary, APIError>) -> Void)?

    init(_ kind: Kind) {
        self.kind = kind
        done = DispatchSemaphore(value: 0)
        then = nil
    }

    init(_ kind: Kind, then: @escaping @Sendable (Result<IngestSummary, APIError>) -> Void) {
        self.kind = kind
        done = nil
        self.then = then
    }

    func finish(_ result: Result<IngestSummary, APIError>) {
        if let then { return then(result) }
        outcome.withLock { $0 = result }
        done?.signal()
    }

    /// Blocks the calling thread until the writer has committed or failed this job.
    func wait() -> Result<IngestSummary, APIError> {
        done?.wait()
        return outcome.withLock { $0! }
    }
}
