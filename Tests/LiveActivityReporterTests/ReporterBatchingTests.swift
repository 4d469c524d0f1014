import Foundation
import Testing
@testable import LiveActivityReporter

/// Batching and flushing against the real monitor over real HTTP.
@Suite(.serialized)
struct ReporterBatchingTests {
    @Test func fullBatchesGoAtOnceAndThePartialRestOnFlush() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let transport = RecordingTransport()
        var configuration = ReporterConfiguration(serverURL: server.url)
        configuration.maxBatchEvents = 10
        configuration.batchDelay = 3600    // the rest would wait an hour but for flush()
        let reporter = ActivityReporter(configuration: configuration, transport: transport)

        await reporter.report(Samples.series(25))
        #expect(try await eventually { await reporter.statistics.accepted == 20 })
        #expect(await reporter.statistics.buffered == 5)
        #expect(transport.attempts.count == 2)

        #expect(await reporter.flush())
        #expect(transport.attempts.map(\.eventIDs.count) == [10, 10, 5])
        #expect(transport.attempts.flatMap(\.eventIDs) == Samples.series(25).map(\.id), "in report order")
        #expect(try await server.metric(#"liveactivity_ingest_events_total{type="activity.updated"}"#) == 24)
        let stats = await reporter.statistics
        #expect(stats.reported == 25 && stats.accepted == 25 && stats.buffered == 0 && stats.requests == 3)
    }

    @Test func aPartialBatchGoesAfterTheBatchDelay() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let transport = RecordingTransport()
        let clock = SleepRecorder()
        var configuration = ReporterConfiguration(serverURL: server.url)
        configuration.batchDelay = 0.75
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: clock.immediate)

        await reporter.report(Samples.series(3))
        #expect(try await eventually { await reporter.statistics.accepted == 3 })
        #expect(clock.recorded == [0.75])
        #expect(transport.attempts.map(\.eventIDs.count) == [3])
    }

    @Test func aBatchStaysUnderTheByteLimit() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let transport = RecordingTransport()
        var configuration = ReporterConfiguration(serverURL: server.url)
        configuration.maxBatchBytes = 1000
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: SleepRecorder().immediate)

        await reporter.report(Samples.series(20))
        #expect(await reporter.flush())
        #expect(transport.attempts.count > 1)
        #expect(transport.attempts.allSatisfy { $0.body.count <= 1000 })
        #expect(transport.attempts.flatMap(\.eventIDs).count == 20)
        #expect(await reporter.statistics.accepted == 20)
    }

    @Test func aBatchTheServerFindsTooLargeIsSplit() async throws {
        let server = try LiveServer { $0.maxBodyBytes = 2048 }
        defer { server.stop() }
        let transport = RecordingTransport()
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url),
                                        transport: transport, sleep: SleepRecorder().immediate)
        let events = Samples.series(16)
        await reporter.report(events)
        #expect(await reporter.flush())
        #expect(transport.attempts.first?.status == 413)
        #expect(transport.attempts.dropFirst().allSatisfy { $0.status == 200 })
        let stats = await reporter.statistics
        #expect(stats.accepted == 16 && stats.rejected == 0 && stats.retries == 0)
    }

    @Test func flushWithNothingBufferedReturnsAtOnce() async throws {
        let reporter = ActivityReporter(serverURL: URL(string: "http://127.0.0.1:9")!)
        #expect(await reporter.flush())
        #expect(await reporter.statistics == ReporterStatistics())
    }

    @Test func theAppIsFilledInAndCloseDropsLaterEvents() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let lines = LogLines()
        var configuration = ReporterConfiguration(serverURL: server.url, app: "com.example.timer")
        configuration.log = lines.sink
        let reporter = ActivityReporter(configuration: configuration, sleep: SleepRecorder().immediate)
        await reporter.report(Samples.series(2))
        await reporter.close()
        await reporter.report(Samples.series(1, prefix: "late"))
        let stats = await reporter.statistics
        #expect(stats.accepted == 2 && stats.dropped == 1 && stats.reported == 3)
        #expect(lines.all.contains { $0.contains("late00") && $0.contains("closed") })
        let activity = try #require(try await server.json("/api/activities/T1").objectValue)
        #expect(activity["app"] == "com.example.timer")
    }
}
