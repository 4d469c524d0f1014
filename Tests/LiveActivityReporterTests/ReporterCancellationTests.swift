import Foundation
import Testing
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// A transport whose every attempt takes `seconds` (a slow or hung monitor).
final class SlowTransport: ReporterTransport {
    let seconds: Double

    init(seconds: Double) { self.seconds = seconds }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
        return TransportResponse(status: 200)
    }
}

/// `flush()` and `close()` are often awaited within a deadline the caller does not control (iOS
/// ends a background task when it likes, a process manager a shutdown): cancelling the caller
/// must end the wait at once, or after at most one last attempt for `close`.
@Suite(.serialized)
struct ReporterCancellationTests {
    @Test func cancellingTheCallerEndsAFlushAtOnceAndKeepsTheEvents() async throws {
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: URL(string: "http://monitor.invalid")!),
                                        transport: SlowTransport(seconds: 2), sleep: SleepRecorder().immediate)
        await reporter.report(Samples.series(3))
        let flushing = Task { await reporter.flush() }
        try await Task.sleep(nanoseconds: 100_000_000)
        let start = Date()
        flushing.cancel()
        let flushed = await flushing.value
        let elapsed = Date().timeIntervalSince(start)
        #expect(flushed == false)
        #expect(elapsed < 1, "flush() returned \(elapsed) s after its task was cancelled")
        // The attempt under way is not abandoned: its events arrive.
        #expect(try await eventually { await reporter.statistics.accepted == 3 })
    }

    @Test func aFlushFromACancelledTaskReturnsAtOnce() async throws {
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: URL(string: "http://monitor.invalid")!),
                                        transport: SlowTransport(seconds: 2), sleep: SleepRecorder().immediate)
        await reporter.report(Samples.series(3))
        let start = Date()
        let flushed = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await reporter.flush()
        }.value
        #expect(flushed == false)
        #expect(Date().timeIntervalSince(start) < 1)
        #expect(try await eventually { await reporter.statistics.accepted == 3 })
    }

    /// A monitor whose store is closed: it answers every ingest 503 with Retry-After: 5, which
    /// `close()` (10 s) would wait out twice. The reporter sleeps for real.
    static func closingAgainstAnUnavailableMonitor(_ transport: RecordingTransport, _ down: LiveServer) -> ActivityReporter {
        down.server.store.close()
        var configuration = ReporterConfiguration(serverURL: down.url)
        configuration.batchDelay = 3600    // nothing goes before close()
        return ActivityReporter(configuration: configuration, transport: transport, random: { 0 })
    }

    @Test func cancellingCloseCutsTheBackOffShortForOneLastAttempt() async throws {
        let down = try LiveServer()
        defer { down.stop() }
        let up = try LiveServer()
        defer { up.stop() }
        // The monitor is back for the last attempt: it delivers everything.
        let transport = RecordingTransport([.pass], then: .redirect(to: up.url))
        let reporter = Self.closingAgainstAnUnavailableMonitor(transport, down)
        await reporter.report(Samples.series(3))
        let closing = Task { await reporter.close() }
        #expect(try await eventually { transport.attempts.count == 1 })
        try await Task.sleep(nanoseconds: 100_000_000)    // into the 5 s back-off
        let start = Date()
        closing.cancel()
        await closing.value
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed < 2, "close() returned \(elapsed) s after its task was cancelled")
        #expect(transport.attempts.map(\.status) == [503, 200])
        let stats = await reporter.statistics
        #expect(stats.accepted == 3 && stats.dropped == 0 && stats.buffered == 0)
    }

    @Test func cancellingCloseAgainstAMonitorStillDownDropsTheRestAfterOneLastAttempt() async throws {
        let down = try LiveServer()
        defer { down.stop() }
        let transport = RecordingTransport()
        let reporter = Self.closingAgainstAnUnavailableMonitor(transport, down)
        await reporter.report(Samples.series(3))
        let closing = Task { await reporter.close() }
        #expect(try await eventually { transport.attempts.count == 1 })
        try await Task.sleep(nanoseconds: 100_000_000)
        let start = Date()
        closing.cancel()
        await closing.value
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed < 2, "close() returned \(elapsed) s after its task was cancelled")
        #expect(transport.attempts.map(\.status) == [503, 503])
        let stats = await reporter.statistics
        #expect(stats.accepted == 0 && stats.dropped == 3 && stats.buffered == 0)
        // Closed: nothing is sent any more.
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(transport.attempts.count == 2)
    }

    /// Already cancelled (a shutdown handler running in a cancelled task): one attempt, as for
    /// `close(within: 0)`, no back-off.
    @Test func closeFromACancelledTaskMakesOneAttempt() async throws {
        let down = try LiveServer()
        defer { down.stop() }
        let transport = RecordingTransport()
        let reporter = Self.closingAgainstAnUnavailableMonitor(transport, down)
        await reporter.report(Samples.series(3))
        let start = Date()
        await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await reporter.close()
        }.value
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed < 2, "close() took \(elapsed) s in a cancelled task")
        #expect(transport.attempts.map(\.status) == [503])
        #expect(await reporter.statistics.dropped == 3)
    }
}
