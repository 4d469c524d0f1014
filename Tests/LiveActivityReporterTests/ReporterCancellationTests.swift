import Foundation
import Testing
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

/// `flush()` is often awaited within a deadline the caller does not control (iOS ends a
/// background task when it likes): cancelling the caller must end the wait at once.
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
}
