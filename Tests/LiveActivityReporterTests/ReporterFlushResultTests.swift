import Foundation
import Testing
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// What `flush()` returns, against the real monitor: true only when every event it waited for
/// reached the monitor; false when any was refused for good, though the buffer is then empty.
@Suite(.serialized)
struct ReporterFlushResultTests {
    @Test func aFlushTheMonitorRefusedForAWrongTokenReturnsFalse() async throws {
        let server = try LiveServer { $0.ingestToken = "right-token" }
        defer { server.stop() }
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url, ingestToken: "wrong-token"),
                                        sleep: SleepRecorder().immediate)
        await reporter.report(Samples.series(3))
        #expect(await reporter.flush() == false, "nothing was delivered")
        let stats = await reporter.statistics
        #expect(stats.rejected == 3 && stats.accepted == 0 && stats.buffered == 0)
        #expect(stats.lastRejection?.status == 401)
        #expect(try await server.metric(#"liveactivity_ingest_events_total{type="activity.started"}"#) ?? 0 == 0)
    }

    /// A 422 costs only the invalid event: the rest is delivered, and the flush still says that
    /// not everything was. A rejection before a flush does not count against it.
    @Test func aFlushWithAnInvalidEventReturnsFalseAndALaterCleanOneTrue() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let transport = RecordingTransport()
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url),
                                        transport: transport, sleep: SleepRecorder().immediate)
        let invalid = LiveActivityEvent.stale(activityID: "T1", occurredAt: Date(timeIntervalSince1970: 100), id: "too-old")
        await reporter.report(Samples.series(2) + [invalid])
        #expect(await reporter.flush() == false, "one event was refused")
        #expect(transport.attempts.map(\.status) == [422, 200])
        var stats = await reporter.statistics
        #expect(stats.accepted == 2 && stats.rejected == 1 && stats.buffered == 0)

        await reporter.report(Samples.series(3, prefix: "later"))
        #expect(await reporter.flush(), "every event buffered since was stored")
        stats = await reporter.statistics
        #expect(stats.accepted == 5 && stats.rejected == 1)
    }

    /// One event over the monitor's body limit cannot be split further: 413, refused for good.
    @Test func aFlushOfAnEventTooLargeForTheMonitorReturnsFalse() async throws {
        let server = try LiveServer { $0.maxBodyBytes = 2048 }
        defer { server.stop() }
        let transport = RecordingTransport()
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url),
                                        transport: transport, sleep: SleepRecorder().immediate)
        let large = LiveActivityEvent.started(
            activityID: "T1", bookingID: "BK-T1", attributesType: "TimerWidgetAttributes",
            ActivityStarted(contentState: ["note": .string(String(repeating: "x", count: 4096))]),
            occurredAt: Samples.at(0), id: "large")
        await reporter.report(large)
        #expect(await reporter.flush() == false)
        #expect(transport.attempts.map(\.status) == [413])
        let stats = await reporter.statistics
        #expect(stats.rejected == 1 && stats.buffered == 0 && stats.lastRejection?.status == 413)
    }
}
