import Dispatch
import Foundation

/// Runs blocking client code on real threads: neither the cooperative pool (one thread per
/// core) nor Dispatch's global queues (a small, capped pool) would run them all at once.
enum Concurrently {
    /// Starts `body(i)` for i in 0..<threads, each on its own thread; the group is left by each.
    static func start(threads: Int, _ body: @escaping @Sendable (Int) -> Void) -> DispatchGroup {
        let group = DispatchGroup()
        for index in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                body(index)
                group.leave()
            }
        }
        return group
    }

    /// Runs `body(i)` for i in 0..<threads, each on its own thread; returns when all are done
    /// (true) or `timeout` seconds have passed (false).
    static func run(threads: Int, timeout: Double = 10, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
        start(threads: threads, body).wait(timeout: .now() + timeout) == .success
    }
}
