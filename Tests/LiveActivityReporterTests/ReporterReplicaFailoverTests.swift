import Foundation
import Testing
@testable import LiveActivityReporter

/// The reporter against two real `serve` replicas on one PostgreSQL database (DESIGN.md
/// section 9; the replicas themselves: PostgresTakeoverTests): the standby first in the list
/// (503), then the leader killed midway. Every event is stored once, on whichever leads.
@Suite(.serialized)
struct ReporterReplicaFailoverTests {
    @Test func aStandbyFirstAndALeaderKilledMidwayLoseNothing() async throws {
        let uri = try PostgresCluster.database()
        let leader = try ServeProcess(["--db", uri])
        let standby = try ServeProcess(["--db", uri])
        defer { _ = standby.stop() }
        let lines = LogLines()
        var configuration = ReporterConfiguration(serverURLs: [Self.url(standby), Self.url(leader)])
        configuration.batchDelay = 0
        configuration.requestTimeout = 5
        configuration.retry = RetryPolicy(initialDelay: 0.2, multiplier: 2, maxDelay: 2, jitter: 0.5)
        configuration.log = lines.sink
        // The real clock: the standby's Retry-After and the takeover take real seconds.
        let reporter = ActivityReporter(configuration: configuration)
        await reporter.report(Samples.series(5))
        #expect(await reporter.flush(), "the leader took what the standby refused: \(lines.value)")
        #expect(await reporter.statistics.failovers == 1)

        leader.kill()
        await reporter.report(Samples.series(5, activityID: "T2", booking: "BK-T2", prefix: "h"))
        // The other replica takes over within seconds; meanwhile the reporter goes round both.
        #expect(try await eventually(within: 30) { await reporter.statistics.buffered == 0 }, "\(lines.value)")
        let stats = await reporter.statistics
        #expect(stats.accepted + stats.duplicates == 10 && stats.rejected == 0 && stats.dropped == 0, "\(stats)")
        #expect(stats.failovers >= 2)

        for booking in ["BK-T1", "BK-T2"] {
            let answer = try await URLSessionTransport().send(TransportRequest(
                url: Self.url(standby).appendingPathComponent("api/bookings/\(booking)"), method: "GET"))
            #expect(answer.status == 200)
            let events = try JSONDecoder().decode(JSONContent.self, from: answer.body).objectValue?["events"]
            guard case .array(let list)? = events else {
                Issue.record("no events for \(booking): \(String(decoding: answer.body, as: UTF8.self))")
                continue
            }
            let ids = list.compactMap { $0.objectValue?["id"]?.stringValue }
            #expect(ids.count == 5 && Set(ids).count == 5, "\(booking): \(ids)")
        }
    }

    static func url(_ replica: ServeProcess) -> URL { URL(string: "http://127.0.0.1:\(replica.port)")! }
}
