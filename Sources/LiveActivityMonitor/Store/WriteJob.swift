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
    private let done = DispatchSemaphore(value: 0)

    init(_ kind: Kind) { self.kind = kind }

    func finish(_ result: Result<IngestSummary, APIError>) {
        outcome.withLock { $0 = result }
        done.signal()
    }

    /// Blocks the calling (request) thread until the writer has committed or failed this job.
    func wait() -> Result<IngestSummary, APIError> {
        done.wait()
        return outcome.withLock { $0! }
    }
}
