import Glibc
import Synchronization

extension Mutex where Value: ~Copyable {
    /// `withLock` for a thread at a low CPU priority (`NicedThreads`): it never waits in the
    /// kernel for the lock, it tries again after a short sleep (20 µs, doubling up to 1 ms).
    ///
    /// Why: on Linux `Mutex` is a priority-inheritance futex, whose unlock hands the lock to the
    /// thread that waits in the kernel for it. Nice takes no part in priority inheritance, so a
    /// niced waiter handed the lock may not run for milliseconds on busy processors, while the
    /// writer or a polling thread, wanting the lock again, waits behind it. A thread that only
    /// tries is never handed the lock; it holds it only while it runs.
    borrowing func withLockWhenFree<Result>(_ body: (inout sending Value) -> sending Result) -> sending Result {
        var pause: UInt32 = 20
        while true {
            if let result = withLockIfAvailable(body) { return result }
            usleep(pause)
            pause = min(2 * pause, 1000)
        }
    }
}
