import Foundation

/// Exponential back-off with jitter for failed sends (timeouts, dropped connections, 5xx, 408,
/// 429).
///
/// After the n-th consecutive failure the reporter waits
/// `base × (1 − jitter × r)`, `base = min(maxDelay, initialDelay × multiplier^(n−1))`, r
/// uniform in [0, 1), so that many phones or backend workers that failed together do not retry
/// together. A server's `Retry-After` (the monitor sends 5 s with a 503) is a floor, and the
/// jitter goes above it: `max(base, min(retryAfter, maxDelay)) × (1 + jitter × r)`. Below the
/// floor every client turned away together would come back at the same instant.
public struct RetryPolicy: Sendable, Hashable {
    public var initialDelay: TimeInterval
    public var multiplier: Double
    public var maxDelay: TimeInterval
    /// The random fraction of each delay, 0…1.
    public var jitter: Double
    /// The shortest wait before a retry.
    public static let minimumDelay: TimeInterval = 0.05

    public init(initialDelay: TimeInterval = 0.5, multiplier: Double = 2, maxDelay: TimeInterval = 60,
                jitter: Double = 0.5) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The wait after `failures` consecutive failures (1 for the first), given a random number
    /// in [0, 1) and the server's `Retry-After`, if any.
    /// Delays are at least `minimumDelay`, and never shrink from one failure to the next, whatever
    /// the settings: a refused connection fails in microseconds, and a zero delay would retry in
    /// a tight loop.
    public func delay(afterFailures failures: Int, random: Double, retryAfter: TimeInterval? = nil) -> TimeInterval {
        let exponent = Double(max(failures, 1) - 1)
        let initial = max(initialDelay, Self.minimumDelay)
        let base = min(max(maxDelay, initial), initial * pow(max(multiplier, 1), exponent))
        let r = min(max(random, 0), 1)
        guard let retryAfter, retryAfter > 0 else { return max(Self.minimumDelay, base * (1 - jitter * r)) }
        return max(base, min(retryAfter, maxDelay)) * (1 + jitter * r)
    }
}
