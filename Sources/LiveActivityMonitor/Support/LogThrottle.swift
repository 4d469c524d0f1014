import Synchronization

/// Passes at most `limit` messages per `interval` seconds on to `write` and counts the rest,
/// saying how many were left out with the first message of a later window: a flood of refused
/// connections, each of which libmicrohttpd reports, must not flood the log.
final class LogThrottle: Sendable {
    private struct Window {
        var start = -Double.infinity
        var passed = 0
        var dropped = 0
    }

    private let window = Mutex(Window())
    private let limit: Int
    private let interval: Double
    private let clock: Clock
    private let write: @Sendable (String) -> Void

    init(limit: Int = 20, interval: Double = 60, clock: Clock, write: @escaping @Sendable (String) -> Void) {
        self.limit = limit
        self.interval = interval
        self.clock = clock
        self.write = write
    }

    /// Says how many messages of the current window were left out, if any (at stop: no later
    /// message would tell).
    func flush() {
        let leftOut = window.withLock { w in
            defer { w.dropped = 0 }
            return w.dropped
        }
        if leftOut > 0 { write("(\(leftOut) more message(s) were left out of the log)") }
    }

    func callAsFunction(_ message: String) {
        let now = clock.now()
        let (pass, leftOut) = window.withLock { w -> (Bool, Int) in
            var leftOut = 0
            if now - w.start >= interval {
                leftOut = w.dropped
                w = Window(start: now)
            }
            guard w.passed < limit else {
                w.dropped += 1
                return (false, 0)
            }
            w.passed += 1
            return (true, leftOut)
        }
        if leftOut > 0 { write("(\(leftOut) more message(s) of the previous \(Int(interval)) s were left out of the log)") }
        if pass { write(message) }
    }
}
