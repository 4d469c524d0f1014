import Foundation
import Testing
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// Failures: what is retried (timeouts, dropped connections, 408, 429, 500, 502, 503, 504), how
/// long the reporter waits, what is never retried (other answers), and how much it keeps while
/// the monitor is away.
@Suite(.serialized)
struct ReporterRetryTests {
    @Test func aRetryAfterADroppedConnectionIsNeverDoubleCounted() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        // The first attempt reaches the server, which stores the events and answers; the
        // connection then drops before the answer is read.
        let transport = RecordingTransport([.dropAfterSending])
        let clock = SleepRecorder()
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url),
                                        transport: transport, sleep: clock.immediate)
        let events = Samples.series(5)
        await reporter.report(events)
        #expect(await reporter.flush() == false, "the first attempt failed")
        #expect(await reporter.flush())

        let attempts = transport.attempts
        #expect(attempts.count == 2)
        #expect(attempts.map(\.status) == [200, 200])
        #expect(attempts[0].body == attempts[1].body, "the retry resends the same events with the same ids")
        let stats = await reporter.statistics
        #expect(stats.accepted == 0 && stats.duplicates == 5 && stats.retries == 1)

        #expect(try await server.metric(#"liveactivity_ingest_events_total{type="activity.started"}"#) == 1)
        #expect(try await server.metric(#"liveactivity_ingest_events_total{type="activity.updated"}"#) == 4)
        #expect(try await server.metric("liveactivity_ingest_duplicates_total") == 5)
        #expect(try await server.metric(#"liveactivity_activities_started_total{attributes_type="TimerWidgetAttributes",source="app"}"#) == 1)
        let stored = try await server.events(booking: "BK-T1")
        #expect(stored.count == 5)
    }

    @Test func aRejectedEventIsNeverResentAndTheRestOfItsBatchStillGoes() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let transport = RecordingTransport()
        let lines = LogLines()
        var configuration = ReporterConfiguration(serverURL: server.url)
        configuration.log = lines.sink
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: SleepRecorder().immediate)
        let secret = "zz-not-hex-" + String(repeating: "s3cr3t", count: 4)
        let events = Samples.series(2) + [.tokenUpdated(activityID: "T1", pushToken: PushToken(hex: secret),
                                                        occurredAt: Samples.at(3), id: "bad-token")]
            + Samples.series(4, prefix: "f").dropFirst()
        await reporter.report(Array(events))
        #expect(await reporter.flush() == false, "one event was refused")

        let attempts = transport.attempts
        #expect(attempts.map(\.status) == [422, 200])
        #expect(attempts[0].eventIDs == events.map(\.id))
        #expect(attempts[1].eventIDs == events.map(\.id).filter { $0 != "bad-token" })
        let stats = await reporter.statistics
        #expect(stats.rejected == 1 && stats.accepted == 5 && stats.retries == 0)
        #expect(stats.lastRejection?.status == 422 && stats.lastRejection?.events == 1)
        #expect(stats.lastRejection?.message.hasPrefix("bad-token: push_token") == true, "\(String(describing: stats.lastRejection))")
        #expect(lines.value.contains { $0.contains("bad-token") && $0.contains("push_token") })
        #expect(!lines.value.contains { $0.contains(secret) }, "a token never reaches the log")
    }

    @Test func aBatchOfOnlyInvalidEventsIsSentOnce() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let transport = RecordingTransport()
        let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url),
                                        transport: transport, sleep: SleepRecorder().immediate)
        // One call, so that both are buffered before the (immediate) batch delay ends.
        await reporter.report([.updated(activityID: "", ActivityUpdated(contentState: [:]), occurredAt: Samples.at(0)),
                               .stale(activityID: "A", occurredAt: Date(timeIntervalSince1970: 100))])
        #expect(await reporter.flush() == false)
        #expect(transport.attempts.map(\.status) == [422])
        #expect(await reporter.statistics.rejected == 2)
        #expect(try await server.metric(#"liveactivity_ingest_rejected_total{reason="invalid"}"#) == 1)
    }

    @Test func otherClientErrorsAreNotRetriedEither() async throws {
        let server = try LiveServer { $0.ingestToken = "right-token" }
        defer { server.stop() }
        let transport = RecordingTransport()
        let lines = LogLines()
        var configuration = ReporterConfiguration(serverURL: server.url, ingestToken: "wrong-token")
        configuration.log = lines.sink
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: SleepRecorder().immediate)
        await reporter.report(Samples.series(3))
        #expect(await reporter.flush() == false)
        #expect(transport.attempts.map(\.status) == [401])
        #expect(await reporter.statistics.rejected == 3)
        #expect(await reporter.statistics.lastRejection?.status == 401)
        #expect(lines.value.contains { $0.contains("401") && $0.contains("ingest token") })
        #expect(!lines.value.contains { $0.contains("wrong-token") })
    }

    @Test func backOffGrowsExponentiallyWithJitterUpToTheCap() async throws {
        let server = try LiveServer()
        defer { server.stop() }
        let transport = RecordingTransport(Array(repeating: .timeOut, count: 6))
        let clock = SleepRecorder()
        var configuration = ReporterConfiguration(serverURL: server.url)
        configuration.batchDelay = 0
        configuration.retry = RetryPolicy(initialDelay: 0.5, multiplier: 2, maxDelay: 5, jitter: 0.5)
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: clock.immediate,
                                        random: { 0.25 })
        await reporter.report(Samples.series(2))
        #expect(try await eventually { await reporter.statistics.accepted == 2 })

        // Each wait is the exponential delay, capped at 5 s, less 0.5 × 0.25 of it.
        #expect(clock.recorded == [0.5, 1, 2, 4, 5, 5].map { $0 * 0.875 })
        #expect(transport.attempts.map(\.status) == [nil, nil, nil, nil, nil, nil, 200])
        let stats = await reporter.statistics
        #expect(stats.requests == 7 && stats.retries == 6 && stats.duplicates == 0)
    }

    @Test func aServiceUnavailableAnswerIsRetriedAfterItsRetryAfter() async throws {
        // A monitor whose store is closed answers every ingest 503 with Retry-After: 5.
        let down = try LiveServer()
        defer { down.stop() }
        down.server.store.close()
        let up = try LiveServer()
        defer { up.stop() }
        let transport = RecordingTransport([.pass, .pass], then: .redirect(to: up.url))
        let clock = SleepRecorder()
        var configuration = ReporterConfiguration(serverURL: down.url)
        configuration.batchDelay = 0
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: clock.immediate,
                                        random: { 0.5 })
        await reporter.report(Samples.series(3))
        #expect(try await eventually { await reporter.statistics.accepted == 3 })
        #expect(transport.attempts.map(\.status) == [503, 503, 200])
        // Retry-After outweighs the 0.5 s and 1 s back-off; the jitter (0.5 × 0.5 of it) goes above.
        #expect(clock.recorded == [6.25, 6.25])
        #expect(try await up.metric("liveactivity_ingest_duplicates_total") == 0)
    }

    @Test func whileTheMonitorIsAwayTheBufferKeepsTheStartAndTheNewestEvents() async throws {
        // Nothing listens on `away`: attempts fail with a refused connection.
        let away = try LiveServer()
        let awayURL = away.url
        away.stop()
        let server = try LiveServer()
        defer { server.stop() }
        let transport = RecordingTransport()
        let clock = SleepRecorder()
        let lines = LogLines()
        var configuration = ReporterConfiguration(serverURL: awayURL)
        configuration.maxBatchEvents = 4
        configuration.maxBufferedEvents = 10
        configuration.batchDelay = 0
        configuration.log = lines.sink
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: clock.suspending)

        let events = Samples.series(25)
        await reporter.report(Array(events.prefix(4)))
        // Wait until the first attempt failed and the reporter is backing off…
        #expect(try await eventually { clock.recorded.count == 1 })
        #expect(transport.attempts.map(\.status) == [nil])
        // …then report the rest while it waits: the start (e00) and the newest nine are kept.
        await reporter.report(Array(events.dropFirst(4)))
        var stats = await reporter.statistics
        #expect(stats.dropped == 15 && stats.buffered == 10 && stats.reported == 25)
        #expect(lines.value.contains { $0.contains("dropped") && $0.contains("e01") })

        // The monitor is back: flush() cuts the back-off short.
        transport.setFallback(.redirect(to: server.url))
        #expect(await reporter.flush())
        stats = await reporter.statistics
        #expect(stats.accepted == 10 && stats.buffered == 0 && stats.dropped == 15)
        let stored = try await server.events(booking: "BK-T1")
        #expect(stored.count == 10, "the start was kept, so the updates belong to its booking")
        #expect(try await server.metric(#"liveactivity_ingest_events_total{type="activity.updated"}"#) == 9)
        let activity = try await server.get("/api/activities/T1")
        #expect(activity.status == 200)
        #expect(transport.attempts.dropFirst().flatMap(\.eventIDs) == [events[0].id] + events.suffix(9).map(\.id))
    }

    /// The monitor sends neither, but a proxy or load balancer in front of it does.
    @Test(arguments: [429, 408])
    func throttledAndTimedOutAnswersAreRetriedAfterTheirRetryAfter(status: Int) async throws {
        let transport = ScriptedTransport([TransportResponse(status: status, headers: ["Retry-After": "7"]),
                                           TransportResponse(status: status)])
        let clock = SleepRecorder()
        var configuration = ReporterConfiguration(serverURL: URL(string: "http://monitor.invalid")!)
        configuration.batchDelay = 0
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: clock.immediate,
                                        random: { 0 })
        await reporter.report(Samples.series(3))
        #expect(try await eventually { await reporter.statistics.accepted == 3 })
        let requests = transport.requests
        #expect(requests.count == 3)
        #expect(Set(requests.map(\.body)).count == 1, "every attempt sends the same events with the same ids")
        // The first wait honours Retry-After: 7; the second, without one, is the back-off.
        #expect(clock.recorded == [7, 1])
        let stats = await reporter.statistics
        #expect(stats.rejected == 0 && stats.retries == 2)
    }

    @Test func aRetryAfterGivenAsAnHTTPDateIsHonoured() async throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let sent = Date()
        let in30s = formatter.string(from: sent.addingTimeInterval(30))
        let transport = ScriptedTransport([TransportResponse(status: 503, headers: ["Retry-After": in30s])])
        let clock = SleepRecorder()
        var configuration = ReporterConfiguration(serverURL: URL(string: "http://monitor.invalid")!)
        configuration.batchDelay = 0
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: clock.immediate,
                                        random: { 0 })
        await reporter.report(Samples.series(1))
        #expect(try await eventually { await reporter.statistics.accepted == 1 })
        let waits = clock.recorded
        // The date is to the second, and the wait is worked out some time after it was made (a
        // loaded machine has taken seconds): more than 29 s less that time, at most 30 s.
        let elapsed = Date().timeIntervalSince(sent)
        #expect(waits.count == 1 && waits[0] > 29 - elapsed && waits[0] <= 30, "waited \(waits) for \(in30s), \(elapsed) s later")
    }
}
