import Foundation

/// Monotonic seconds, for measuring intervals.
enum Stopwatch {
    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// CPU seconds of this thread (`CLOCK_THREAD_CPUTIME_ID`) or process (`CLOCK_PROCESS_CPUTIME_ID`).
    static func cpu(_ clock: clockid_t) -> Double {
        var t = timespec()
        clock_gettime(clock, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// Seconds `body` took, and what it returned.
    static func time<T>(_ body: () throws -> T) rethrows -> (seconds: Double, value: T) {
        let start = now()
        let value = try body()
        return (now() - start, value)
    }
}
