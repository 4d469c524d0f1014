import Synchronization

/// Why a store cannot write, kept while it cannot: both stores set it after every commit and
/// log each change between writable and not — the first failure and the recovery, not every
/// refused request.
enum WriteProblem {
    static func record(_ problem: String?, in failure: borrowing Mutex<String?>, log: (String) -> Void) {
        let before = failure.withLock { failure in
            defer { failure = problem }
            return failure
        }
        if before == nil, let problem {
            log("store: cannot write: \(problem); ingest answers 503 and /-/ready fails until it can")
        } else if before != nil, problem == nil {
            log("store: writable again")
        }
    }
}
