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

    /// An event larger than the buffer's bytes (or than the monitor takes) is rejected alone: it
    /// does not push the buffered events out first.
    @Test func anEventTooLargeForTheBufferIsRejectedAlone() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        var configuration = ReporterConfiguration(serverURL: server.url)
        configuration.maxBufferedBytes = 64 * 1024
        configuration.batchDelay = 3600
        let reporter = ActivityReporter(configuration: configuration, sleep: SleepRecorder().immediate)
        await reporter.report(Samples.series(10))
        let huge = LiveActivityEvent.updated(activityID: "T1", ActivityUpdated(contentState: ["note": .string(String(repeating: "x", count: 100_000))]),
                                             occurredAt: Samples.at(50), id: "huge")
        await reporter.report(huge)
        var stats = await reporter.statistics
        #expect(stats.rejected == 1 && stats.dropped == 0 && stats.buffered == 10, "\(stats)")
        #expect(await reporter.flush())
        stats = await reporter.statistics
        #expect(stats.accepted == 10, "\(stats)")
    }

    /// More events a batch than the monitor takes (1,000) would be a 413 every time: 1,000 go.
    @Test func aBatchIsAtMostWhatTheMonitorTakes() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let transport = RecordingTransport()
        var configuration = ReporterConfiguration(serverURL: server.url)
        configuration.maxBatchEvents = 5000
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: SleepRecorder().immediate)
        await reporter.report(Samples.series(2500))
        #expect(await reporter.flush())
        #expect(transport.attempts.map(\.eventIDs.count) == [1000, 1000, 500])
        #expect(await reporter.statistics.accepted == 2500)
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

    /// One oversized batch (a burst of large events, a proxy's limit lowered for a while) must not
    /// throttle the reporter for good: the batch size grows back after successful sends.
    @Test func theBatchSizeGrowsBackAfterA413() async throws {
        let transport = ScriptedTransport([TransportResponse(status: 413, body: Data(#"{"error":"too large"}"#.utf8))])
        var configuration = ReporterConfiguration(serverURL: URL(string: "http://monitor.invalid")!)
        configuration.maxBatchEvents = 8
        configuration.batchDelay = 3600
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: SleepRecorder().immediate)
        await reporter.report(Samples.series(8))
        #expect(await reporter.flush())
        #expect(transport.requests.map { RecordingTransport.ids(in: $0.body).count } == [8, 4, 4])
        for round in 0..<20 {
            await reporter.report(Samples.series(8, prefix: "r\(round)-"))
            #expect(await reporter.flush())
        }
        let sizes = transport.requests.map { RecordingTransport.ids(in: $0.body).count }
        #expect(sizes.suffix(5) == [8, 8, 8, 8, 8], "sizes \(sizes)")
        let stats = await reporter.statistics
        #expect(stats.accepted == 168 && stats.rejected == 0 && stats.retries == 0)
    }

    /// One event too large for the monitor is refused alone (413): rejected and counted, never
    /// sent again. The 413s of the batches that held it were its fault, not their size's, so
    /// the batch size returns to what it was before them: not 1 (everyone else's events one per
    /// request), and not the configured 16 either, which the monitor had refused before.
    @Test func anEventTooLargeForTheMonitorDoesNotHoldTheBatchSizeDown() async throws {
        let server = try LiveServer { $0.maxBodyBytes = 2048 }
        defer { server.stop() }
        let transport = RecordingTransport()
        var configuration = ReporterConfiguration(serverURL: server.url)
        configuration.maxBatchEvents = 16
        configuration.batchDelay = 3600
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: SleepRecorder().immediate)
        await reporter.report(Samples.series(16))
        #expect(await reporter.flush())
        #expect(transport.attempts.map(\.eventIDs.count) == [16, 8, 8], "16 small events are over the limit, 8 are not")

        let large = LiveActivityEvent.updated(
            activityID: "T1", ActivityUpdated(contentState: ["note": .string(String(repeating: "x", count: 4096))]),
            occurredAt: Samples.at(30), id: "large")
        let more = Samples.series(23, prefix: "m")
        await reporter.report(Array(more[0..<3]) + [large] + Array(more[3...]))
        #expect(await reporter.flush() == false, "one event was refused")
        let attempts = transport.attempts.dropFirst(3)
        // 8 → 4 → 2 (its first half goes) → 1 (the event before it goes) → the event alone: refused,
        // and the size is 8 again for the 20 events after it.
        #expect(attempts.map(\.eventIDs.count) == [8, 4, 2, 2, 1, 1, 8, 8, 4])
        #expect(attempts.map(\.status) == [413, 413, 200, 413, 200, 413, 200, 200, 200])
        #expect(attempts.filter { $0.eventIDs.contains("large") }.count == 4)
        let stats = await reporter.statistics
        #expect(stats.accepted == 16 + 23 && stats.rejected == 1 && stats.buffered == 0 && stats.retries == 0, "\(stats)")
        #expect(stats.lastRejection?.status == 413 && stats.lastRejection?.events == 1)

        await reporter.report(Samples.series(8, prefix: "after"))
        #expect(await reporter.flush(), "the refused event is not sent again")
        #expect(transport.attempts.last?.eventIDs.count == 8)
    }

    /// A monitor whose limit stays low: growing back costs an occasional 413, not one in two.
    @Test func growingBackAgainstALastingLimitCostsFew413s() async throws {
        let server = try LiveServer { $0.maxBodyBytes = 2048 }
        defer { server.stop() }
        let transport = RecordingTransport()
        var configuration = ReporterConfiguration(serverURL: server.url)
        configuration.maxBatchEvents = 16
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: SleepRecorder().immediate)
        await reporter.report(Samples.series(400))
        #expect(await reporter.flush())
        let statuses = transport.attempts.map(\.status)
        let refused = statuses.filter { $0 == 413 }.count
        // It tries the full size again now and then (the limit might have been raised)…
        #expect(refused >= 2, "\(refused) of \(statuses.count) attempts were 413")
        // …but not every other request.
        #expect(refused * 8 <= statuses.count, "\(refused) of \(statuses.count) attempts were 413")
        #expect(await reporter.statistics.accepted == 400)
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
        #expect(lines.value.contains { $0.contains("late00") && $0.contains("closed") })
        let activity = try #require(try await server.json("/api/activities/T1").objectValue)
        #expect(activity["app"] == "com.example.timer")
    }
}
