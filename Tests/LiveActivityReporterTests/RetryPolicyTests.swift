import Testing
import LiveActivityReporter

struct RetryPolicyTests {
    @Test func delaysDoubleUpToTheCapWithJitterBelow() {
        let policy = RetryPolicy(initialDelay: 1, multiplier: 2, maxDelay: 30, jitter: 0.5)
        #expect((1...7).map { policy.delay(afterFailures: $0, random: 0) } == [1, 2, 4, 8, 16, 30, 30])
        #expect((1...3).map { policy.delay(afterFailures: $0, random: 0.999_999) }.map { ($0 * 1000).rounded() / 1000 } == [0.5, 1, 2])
    }

    @Test func retryAfterIsAFloorButNotAboveTheCap() {
        let policy = RetryPolicy(initialDelay: 0.5, multiplier: 2, maxDelay: 60, jitter: 0)
        #expect(policy.delay(afterFailures: 1, random: 0.3, retryAfter: 5) == 5)
        #expect(policy.delay(afterFailures: 8, random: 0.3, retryAfter: 5) == 60)
        #expect(policy.delay(afterFailures: 1, random: 0.3, retryAfter: 600) == 60)
    }

    /// Settings that would retry at once, or sooner each time, still wait: a refused connection
    /// fails in microseconds, and the reporter would spin.
    @Test func noSettingRetriesInATightLoop() {
        let zero = RetryPolicy(initialDelay: 0, multiplier: 0.5, maxDelay: 0, jitter: 0)
        #expect((1...5).map { zero.delay(afterFailures: $0, random: 0) } == Array(repeating: RetryPolicy.minimumDelay, count: 5))
        let shrinking = RetryPolicy(initialDelay: 1, multiplier: 0.1, maxDelay: 30, jitter: 0)
        #expect((1...3).map { shrinking.delay(afterFailures: $0, random: 0) } == [1, 1, 1])
    }

    @Test func jitterSpreadsRetriesOfManyClients() {
        let policy = RetryPolicy()
        let delays = Set((0..<100).map { _ in policy.delay(afterFailures: 3, random: Double.random(in: 0..<1)) })
        #expect(delays.count > 90)
        #expect(delays.allSatisfy { $0 > 1 && $0 <= 2 })
    }

    /// A 503 with Retry-After: 5 turns many clients away at once: they must not all come back
    /// at the same instant, nor before the 5 s.
    @Test func jitterGoesAboveRetryAfter() {
        let policy = RetryPolicy()
        let delays = (0..<100).map { policy.delay(afterFailures: 1, random: Double($0) / 100, retryAfter: 5) }
        #expect(Set(delays).count == 100)
        #expect(delays.allSatisfy { $0 >= 5 && $0 < 7.5 })
        // Past the cap, the floor is the cap, and the jitter still spreads the clients.
        #expect(policy.delay(afterFailures: 1, random: 0, retryAfter: 600) == 60)
        #expect(policy.delay(afterFailures: 1, random: 0.5, retryAfter: 600) == 75)
    }
}
