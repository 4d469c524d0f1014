import Foundation
import Testing
@testable import LiveActivityReporter

/// Which answers are worth another try, and what the reporter counts, with scripted answers
/// (the monitor itself sends none of 501, 505, 502 or 504; a proxy in front of it may).
@Suite(.serialized)
struct ReporterStatusTests {
    static let url = URL(string: "http://monitor.invalid")!

    static func reporter(_ transport: ScriptedTransport, clock: SleepRecorder = SleepRecorder(),
                         lines: LogLines? = nil,
                         configure: (inout ReporterConfiguration) -> Void = { _ in }) -> ActivityReporter {
        var configuration = ReporterConfiguration(serverURL: url)
        configuration.batchDelay = 0
        configuration.log = lines?.sink
        configure(&configuration)
        return ActivityReporter(configuration: configuration, transport: transport, sleep: clock.immediate,
                                random: { 0 })
    }

    /// Answers that sending the same request again cannot change fail at once: one request,
    /// `flush()` false, the batch counted as rejected, and the answer kept in
    /// `statistics.lastRejection`.
    @Test(arguments: [400, 401, 403, 404, 405, 410, 415, 501, 505, 507])
    func anAnswerThatRetryingCannotChangeFailsFast(status: Int) async throws {
        let transport = ScriptedTransport([TransportResponse(status: status, body: Data(#"{"error":"no way"}"#.utf8))])
        let lines = LogLines()
        let reporter = Self.reporter(transport, lines: lines)
        await reporter.report(Samples.series(3))
        #expect(await reporter.flush() == false, "nothing was delivered")
        #expect(transport.requests.count == 1)
        let stats = await reporter.statistics
        #expect(stats.rejected == 3 && stats.retries == 0 && stats.buffered == 0 && stats.accepted == 0)
        #expect(stats.lastRejection == ReporterStatistics.Rejection(status: status, message: "no way", events: 3))
        #expect(lines.value.contains { $0.contains("answered \(status)") && $0.contains("dropped 3") })
    }

    /// A 200 that is not the monitor's (a captive portal's page, a proxy answering for a wrong
    /// URL) is counted as accepted, as nothing better is known, but said once in the log.
    @Test func aSuccessWithoutTheMonitorsSummaryIsLoggedOnce() async throws {
        let page = TransportResponse(status: 200, body: Data("<html>Welcome to the hotel Wi-Fi</html>".utf8))
        let transport = ScriptedTransport([page, page])
        let lines = LogLines()
        let reporter = Self.reporter(transport, lines: lines)
        await reporter.report(Samples.series(2))
        #expect(await reporter.flush())
        await reporter.report(Samples.series(2))
        #expect(await reporter.flush())
        #expect(await reporter.statistics.accepted == 4)
        let warnings = lines.value.filter { $0.contains("without the monitor's summary") && $0.contains("hotel Wi-Fi") }
        #expect(warnings.count == 1, "\(lines.value)")
    }

    @Test func plainHTTPBeyondThisMachineIsWarnedAbout() {
        #expect(ActivityReporter.plainHTTPWarning(URL(string: "http://monitor.example:9464")!)?.contains("plain HTTP") == true)
        for quiet in ["https://monitor.example", "http://127.0.0.1:9464", "http://localhost:9464", "http://[::1]:9464"] {
            #expect(ActivityReporter.plainHTTPWarning(URL(string: quiet)!) == nil, "\(quiet)")
        }
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func anAnswerThatMayChangeIsRetried(status: Int) async throws {
        let transport = ScriptedTransport([TransportResponse(status: status)])
        let clock = SleepRecorder()
        let reporter = Self.reporter(transport, clock: clock)
        await reporter.report(Samples.series(3))
        #expect(try await eventually { await reporter.statistics.accepted == 3 })
        #expect(transport.requests.count == 2)
        #expect(clock.recorded == [0.5])
        let stats = await reporter.statistics
        #expect(stats.rejected == 0 && stats.retries == 1 && stats.lastRejection == nil)
    }

    /// `retries` counts attempts that resend what failed, not every batch sent after one.
    @Test func onlyTheResentBatchCountsAsARetry() async throws {
        let transport = ScriptedTransport([TransportResponse(status: 503)])
        let reporter = Self.reporter(transport) { $0.maxBatchEvents = 10 }
        await reporter.report(Samples.series(35))
        #expect(try await eventually { await reporter.statistics.accepted == 35 })
        let stats = await reporter.statistics
        #expect(stats.requests == 5 && stats.retries == 1, "\(stats)")
    }

    /// A caller that flushes after every event must not turn the monitor's "come back in 5 s"
    /// into a request per event: `flush()` does not cut short a back-off after a 5xx, 408 or 429.
    @Test func flushDoesNotCutShortTheBackOffOfAnUnwellMonitor() async throws {
        let transport = ScriptedTransport([], then: TransportResponse(status: 503, headers: ["Retry-After": "5"]))
        let clock = SleepRecorder()
        var configuration = ReporterConfiguration(serverURL: Self.url)
        configuration.batchDelay = 0
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: clock.suspending,
                                        random: { 0 })
        await reporter.report(Samples.series(1))
        #expect(try await eventually { clock.recorded.count == 1 })
        for i in 0..<20 {
            await reporter.report(Samples.series(1, prefix: "f\(i)-"))
            #expect(await reporter.flush() == false)
        }
        #expect(transport.requests.count == 1, "\(transport.requests.count) requests while asked to wait 5 s")
        #expect(await reporter.statistics.buffered == 21)
        await reporter.close(within: 0)
        #expect(await reporter.statistics.dropped == 21)
    }
}
