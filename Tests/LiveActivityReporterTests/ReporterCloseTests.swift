import Foundation
import Testing
@testable import LiveActivityReporter

/// Closing: `close(within:)` keeps retrying until its deadline, on the injected clock, so that a
/// backend shutting down while the monitor restarts loses nothing; `close()` does the same with
/// the configuration's `closeTimeout`.
@Suite(.serialized)
struct ReporterCloseTests {
    static let url = URL(string: "http://monitor.invalid")!

    static func unavailable(retryAfter: String) -> TransportResponse {
        TransportResponse(status: 503, headers: ["Retry-After": retryAfter])
    }

    /// The events wait for an hour's batch delay, which the clock holds until `close` cuts it
    /// short: nothing is sent before the test closes the reporter.
    static func reporter(_ transport: ScriptedTransport, clock: SleepRecorder, lines: LogLines? = nil) -> ActivityReporter {
        var configuration = ReporterConfiguration(serverURL: url)
        configuration.batchDelay = 3600
        configuration.log = lines?.sink
        return ActivityReporter(configuration: configuration, transport: transport, sleep: clock.immediate(holding: 3600),
                                random: { 0 })
    }

    @Test func closeWithinADeadlineRetriesUntilEverythingIsDelivered() async throws {
        let transport = ScriptedTransport([Self.unavailable(retryAfter: "2"), Self.unavailable(retryAfter: "2")])
        let clock = SleepRecorder()
        let reporter = Self.reporter(transport, clock: clock)
        await reporter.report(Samples.series(3))
        await reporter.close(within: 10)

        // Nothing waits for the batch delay; each retry waits its Retry-After.
        #expect(clock.recorded == [2, 2])
        #expect(transport.requests.count == 3)
        #expect(Set(transport.requests.map(\.body)).count == 1, "every attempt sends the same events with the same ids")
        let stats = await reporter.statistics
        #expect(stats.accepted == 3 && stats.dropped == 0 && stats.buffered == 0 && stats.retries == 2)

        await reporter.report(Samples.series(1, prefix: "late"))
        #expect(await reporter.statistics.dropped == 1, "closed: later events are dropped")
        #expect(transport.requests.count == 3)
    }

    @Test func closeWithinADeadlineGivesUpAtTheDeadlineAndCountsTheRestAsDropped() async throws {
        // The monitor answers 503 with Retry-After: 5 for longer than the deadline.
        let transport = ScriptedTransport([], then: Self.unavailable(retryAfter: "5"))
        let clock = SleepRecorder()
        let lines = LogLines()
        let reporter = Self.reporter(transport, clock: clock, lines: lines)
        await reporter.report(Samples.series(4))
        await reporter.close(within: 12)

        // Attempts at 0, 5, 10 and, the last wait cut to the deadline, 12; no wait past it.
        let waits = clock.recorded
        #expect(waits.count == 3 && waits.prefix(2) == [5, 5] && waits[2] > 1.99 && waits[2] <= 2, "waited \(waits)")
        #expect(waits.reduce(0, +) <= 12)
        #expect(transport.requests.count == 4)
        let stats = await reporter.statistics
        #expect(stats.accepted == 0 && stats.dropped == 4 && stats.buffered == 0 && stats.requests == 4)
        #expect(lines.value.contains { $0.contains("closed") && $0.contains("dropped 4") })

        // Nothing is sent after close returned.
        await Task.yield()
        #expect(transport.requests.count == 4)
    }

    /// `close()` is `close(within: configuration.closeTimeout)` (10 s by default): it keeps
    /// retrying like `close(within:)`, and what is left at the deadline is counted the same way,
    /// as `dropped`, never left `buffered` in a reporter that will not send again.
    @Test func closeWithoutADeadlineRetriesUntilTheDefaultDeadlineAndCountsTheRestAsDropped() async throws {
        let transport = ScriptedTransport([], then: Self.unavailable(retryAfter: "5"))
        let clock = SleepRecorder()
        let lines = LogLines()
        let reporter = Self.reporter(transport, clock: clock, lines: lines)
        await reporter.report(Samples.series(3))
        await reporter.close()

        // Attempts at 0, 5 and, the second wait cut to the 10 s deadline, 10.
        let waits = clock.recorded
        #expect(waits.count == 2 && waits[0] == 5 && waits[1] > 4.99 && waits[1] <= 5, "waited \(waits)")
        #expect(waits.reduce(0, +) <= 10)
        #expect(transport.requests.count == 3)
        let stats = await reporter.statistics
        #expect(stats.accepted == 0 && stats.dropped == 3 && stats.buffered == 0 && stats.requests == 3)
        #expect(lines.value.contains { $0.contains("closed") && $0.contains("dropped 3") })
        // Neither a later event nor a flush sends anything.
        await reporter.report(Samples.series(1, prefix: "late"))
        #expect(await reporter.flush())
        #expect(transport.requests.count == 3)
        #expect(await reporter.statistics.dropped == 4)
    }

    @Test func closeWithoutADeadlineDeliversWhatAMonitorRestartingDelayed() async throws {
        let transport = ScriptedTransport([Self.unavailable(retryAfter: "2"), Self.unavailable(retryAfter: "2")])
        let clock = SleepRecorder()
        let reporter = Self.reporter(transport, clock: clock)
        await reporter.report(Samples.series(3))
        await reporter.close()
        #expect(clock.recorded == [2, 2])
        let stats = await reporter.statistics
        #expect(stats.accepted == 3 && stats.dropped == 0 && stats.buffered == 0 && stats.requests == 3)
    }

    /// A deadline computed from a bad clock reading must not keep a shutdown waiting for ever.
    @Test func aNaNDeadlineMeansOneAttempt() async throws {
        let transport = ScriptedTransport(Array(repeating: Self.unavailable(retryAfter: "1"), count: 30))
        let reporter = Self.reporter(transport, clock: SleepRecorder())
        await reporter.report(Samples.series(3))
        await reporter.close(within: .nan)
        #expect(transport.requests.count == 1)
        let stats = await reporter.statistics
        #expect(stats.accepted == 0 && stats.dropped == 3 && stats.buffered == 0)
    }
}
