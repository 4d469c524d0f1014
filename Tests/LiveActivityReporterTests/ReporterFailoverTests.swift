import Foundation
import Testing
import HTTPServer
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// Several monitor URLs (a monitor's replicas, DESIGN.md section 9): a batch whose attempt fails
/// (no connection, a timeout, a standby's 503) goes to the next URL at once with the same event
/// ids, the reporter stays on the URL that answered, and only a full round of failures backs off.
@Suite(.serialized)
struct ReporterFailoverTests {
    @Test func aRefusedFirstURLFailsOverAndEveryEventArrivesOnce() async throws {
        // A monitor that is down: stopped, so its port refuses connections.
        let down = try LiveServer()
        let downURL = down.url
        down.stop()
        let live = try LiveServer()
        defer { live.stop() }
        let lines = LogLines()
        var configuration = ReporterConfiguration(serverURLs: [downURL, live.url])
        configuration.batchDelay = 0
        configuration.log = lines.sink
        let clock = SleepRecorder()
        let reporter = ActivityReporter(configuration: configuration, sleep: clock.immediate)
        await reporter.report(Samples.series(5))
        #expect(await reporter.flush(), "the second URL took the batch")
        await reporter.report(Samples.series(3, prefix: "g").dropFirst().map { $0 })
        #expect(await reporter.flush())

        let stats = await reporter.statistics
        #expect(stats.failovers == 1, "once moved, the reporter stays on the URL that answered")
        #expect(stats.requests == 3 && stats.retries == 1 && stats.accepted == 7 && stats.duplicates == 0)
        #expect(clock.recorded.isEmpty, "no back-off while another URL was left to try")
        #expect(lines.value.filter { $0.contains("failing over") }.count == 1, "\(lines.value)")
        #expect(try await live.metric(#"liveactivity_ingest_events_total{type="activity.started"}"#) == 1)
        #expect(try await live.metric(#"liveactivity_ingest_events_total{type="activity.updated"}"#) == 6)
        #expect(try await live.metric("liveactivity_ingest_duplicates_total") == 0)
        #expect(try await live.events(booking: "BK-T1").count == 7)
    }

    @Test func aMonitorStoppedMidwayHandsOverToTheNext() async throws {
        let first = try LiveServer()
        let second = try LiveServer()
        defer { second.stop() }
        var configuration = ReporterConfiguration(serverURLs: [first.url, second.url])
        configuration.batchDelay = 0
        let reporter = ActivityReporter(configuration: configuration, sleep: SleepRecorder().immediate)
        await reporter.report(Samples.series(4))
        #expect(await reporter.flush())
        #expect(try await first.events(booking: "BK-T1").count == 4)
        first.stop()

        await reporter.report(Samples.series(4, activityID: "T2", booking: "BK-T2", prefix: "h"))
        #expect(await reporter.flush())
        #expect(await reporter.statistics.failovers == 1)
        #expect(try await second.events(booking: "BK-T2").count == 4)
        #expect(try await second.events(booking: "BK-T1").isEmpty, "what the first one stored is not sent again")
        #expect(try await second.metric("liveactivity_ingest_duplicates_total") == 0)
    }

    @Test func aStandbysServiceUnavailableFailsOverWithoutWaiting() async throws {
        // What a standby replica answers ingest with.
        let standbyHits = LockedCounter()
        let standby = try HTTPServer.forReporterTests { _ in
            standbyHits.add(1)
            return HTTPResponse(status: 503, headers: [("Content-Type", "application/json"), ("Retry-After", "1")],
                                body: Array(#"{"error":"standby: another replica leads"}"#.utf8))
        }
        defer { standby.stop() }
        let monitor = try LiveServer()
        defer { monitor.stop() }
        let standbyURL = URL(string: "http://127.0.0.1:\(standby.port)")!
        var configuration = ReporterConfiguration(serverURLs: [standbyURL, monitor.url])
        configuration.batchDelay = 0
        let clock = SleepRecorder()
        let reporter = ActivityReporter(configuration: configuration, sleep: clock.immediate)
        await reporter.report(Samples.series(5))
        #expect(await reporter.flush(), "the monitor took the batch the standby refused")
        await reporter.report(Samples.series(3, activityID: "T2", booking: "BK-T2", prefix: "h"))
        #expect(await reporter.flush())

        #expect(standbyHits.value == 1, "the reporter stays on the monitor")
        #expect(clock.recorded.isEmpty, "the standby's Retry-After is not waited for while the monitor is there")
        let stats = await reporter.statistics
        #expect(stats.failovers == 1 && stats.accepted == 8 && stats.duplicates == 0 && stats.rejected == 0)
        #expect(try await monitor.events(booking: "BK-T1").count == 5)
        #expect(try await monitor.events(booking: "BK-T2").count == 3)
        #expect(try await monitor.metric("liveactivity_ingest_duplicates_total") == 0)
    }

    @Test func aSilentURLTimesOutAndFailsOver() async throws {
        let silent = try SilentListener()
        defer { silent.stop() }
        let monitor = try LiveServer()
        defer { monitor.stop() }
        var configuration = ReporterConfiguration(serverURLs: [silent.url, monitor.url])
        configuration.requestTimeout = 1
        configuration.batchDelay = 0
        let reporter = ActivityReporter(configuration: configuration, sleep: SleepRecorder().immediate)
        await reporter.report(Samples.series(3))
        #expect(await reporter.flush())
        #expect(await reporter.statistics.failovers == 1)
        #expect(try await monitor.events(booking: "BK-T1").count == 3)
    }

    @Test func urlsRotateInOrderAndOnlyAFullRoundBacksOff() async throws {
        let urls = ["a", "b", "c"].map { URL(string: "http://\($0).monitor.invalid")! }
        let unavailable = TransportResponse(status: 503, headers: ["Retry-After": "2"])
        let invalid = TransportResponse(status: 422, body: Data(#"{"errors":[{"index":0,"field":"id","error":"bad"}]}"#.utf8))
        let transport = ScriptedTransport([
            unavailable, TransportResponse(status: 502), ok(3),  // batch 1: a, b, then c takes it
            invalid,                                             // batch 2: c refuses its event; no failover
            ok(1),                                               // batch 3: still c
            TransportResponse(status: 500), unavailable, TransportResponse(status: 504),  // c, a, b: a full round
            ok(1),                                               // then c again, after one back-off
        ])
        let lines = LogLines()
        var configuration = ReporterConfiguration(serverURLs: urls)
        configuration.batchDelay = 0
        configuration.log = lines.sink
        configuration.retry = RetryPolicy(initialDelay: 0.5, multiplier: 2, maxDelay: 60, jitter: 0)
        let clock = SleepRecorder()
        let reporter = ActivityReporter(configuration: configuration, transport: transport, sleep: clock.immediate)
        let events = Samples.series(6)
        await reporter.report(Array(events[0..<3]))
        #expect(await reporter.flush())
        #expect(clock.recorded.isEmpty)
        await reporter.report(events[3])
        #expect(await reporter.flush() == false, "the 422 gave its event up")
        await reporter.report(events[4])
        #expect(await reporter.flush())
        await reporter.report(events[5])
        #expect(await reporter.flush() == false, "a full round failed")
        #expect(try await eventually { await reporter.statistics.buffered == 0 })

        let requests = transport.requests
        try #require(requests.count == 9, "\(requests.map(\.url))")
        #expect(requests.map { $0.url.host ?? "" } == ["a", "b", "c", "c", "c", "c", "a", "b", "c"].map { "\($0).monitor.invalid" })
        #expect(requests.allSatisfy { $0.url.path == "/v1/events" })
        #expect(requests[0].body == requests[2].body, "the same events, with the same ids, go to the next URL")
        #expect(requests[5].body == requests[8].body)
        #expect(clock.recorded == [2], "one back-off, after the full round, of the longest Retry-After")
        let stats = await reporter.statistics
        #expect(stats.failovers == 5 && stats.rejected == 1 && stats.accepted == 5 && stats.requests == 9 && stats.retries == 5)
        #expect(lines.value.filter { $0.contains("failing over") }.count == 5)
    }

    private func ok(_ accepted: Int) -> TransportResponse {
        TransportResponse(status: 200, body: Data(#"{"accepted":\#(accepted),"duplicates":0}"#.utf8))
    }
}

extension HTTPServer {
    /// A bare server on 127.0.0.1, port 0, answering every request with `handler`.
    static func forReporterTests(handler: @escaping HTTPHandler) throws(HTTPServerError) -> HTTPServer {
        var configuration = Configuration()
        configuration.connectionTimeoutSeconds = 5
        configuration.shutdownGracePeriodSeconds = 1
        return try HTTPServer(configuration: configuration, handler: handler)
    }
}
