import Foundation
import Testing
@testable import LiveActivityReporter

/// A monitor that accepts the connection and never answers (hung, stopped in a debugger).
@Suite(.serialized)
struct ReporterTimeoutTests {
    @Test func anAttemptIsGivenUpAfterTheRequestTimeout() async throws {
        let silent = try SilentListener()
        defer { silent.stop() }
        let lines = LogLines()
        var configuration = ReporterConfiguration(serverURL: silent.url)
        configuration.requestTimeout = 1
        configuration.batchDelay = 0
        configuration.log = lines.sink
        // The default transport: its timeout comes from the configuration.
        let reporter = ActivityReporter(configuration: configuration, sleep: SleepRecorder().suspending)
        await reporter.report(Samples.series(2))
        let start = Date()
        #expect(await reporter.flush() == false, "nothing answered")
        let elapsed = Date().timeIntervalSince(start)
        // swift-corelibs-foundation ignored the request's own timeout: 60 s.
        #expect(elapsed >= 0.9 && elapsed < 5, "gave up after \(elapsed) s; requestTimeout is 1 s")
        let stats = await reporter.statistics
        #expect(stats.requests == 1 && stats.buffered == 2)
        #expect(lines.value.contains { $0.contains("will be sent again") })
        // Not `close()`: it would retry for `closeTimeout` on a clock that never wakes up.
        await reporter.close(within: 0)
    }
}
