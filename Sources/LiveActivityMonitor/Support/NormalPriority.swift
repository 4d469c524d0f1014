import Dispatch

/// Runs short pieces of work, one at a time, on a thread at normal priority, for a thread at a low
/// one (`NicedThreads`) that waits for each: what it does under a lock the writer and the polling
/// threads need (a list's spells under the state lock).
///
/// Why: a niced thread holding such a lock can be preempted by any thread at normal priority
/// and not run again for milliseconds while the writer waits behind it (nice takes no part in
/// priority inheritance). A thread at normal priority is scheduled as fairly as the writer, so the
/// writer waits at most for what remains of the spell. (`DispatchQueue.sync` would run the
/// work on the calling thread.)
enum NormalPriority {
    private static let queue = DispatchQueue(label: "list-spells")

    static func run<T>(_ body: () -> T) -> T {
        withoutActuallyEscaping(body) { body in
            let hop = Hop(body)
            let done = DispatchSemaphore(value: 0)
            queue.async {
                hop.run()
                done.signal()
            }
            done.wait()
            return hop.result!
        }
    }

    /// The work and its result, handed to the queue's thread and back.
    ///
    /// `@unchecked Sendable`: the calling thread waits (`done`) from before the queue's thread
    /// runs the work until after it has stored the result, so the two never touch it at once, and
    /// the semaphore orders their memory accesses.
    private final class Hop<T>: @unchecked Sendable {
        /// Let go once run: `withoutActuallyEscaping` traps if the work outlives the call, and
        /// the queue may free its block (which holds this) only after the caller has gone on.
        var body: (() -> T)?
        var result: T?

        init(_ body: @escaping () -> T) { self.body = body }

        func run() {
            result = body?()
            body = nil
        }
    }
}
