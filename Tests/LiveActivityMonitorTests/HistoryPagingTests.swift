import Foundation
import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// Issue 19, item 2: a history's events come a page at a time, so that one large booking
/// cannot make one answer (and its memory) as large as the booking.
@Suite struct HistoryPagingTests {
    static func events(_ answer: JSONValue) -> [JSONValue] {
        if case .array(let list)? = answer["events"] { list } else { [] }
    }

    /// Follows `next_cursor` from `path` and returns every page's events.
    static func allPages(_ server: TestServer, _ path: String, limit: Int) throws -> [[JSONValue]] {
        var pages: [[JSONValue]] = [], cursor: String? = nil
        repeat {
            var url = path + (path.contains("?") ? "&" : "?") + "limit=\(limit)"
            if let cursor { url += "&cursor=" + (cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor) }
            let answer = try server.json(url)
            pages.append(Self.events(answer))
            cursor = answer["next_cursor"]?.stringValue
        } while cursor != nil && pages.count < 100
        return pages
    }

    @Test func aLargeBookingIsAnsweredAPageAtATime() throws {
        let server = try TestServer()
        defer { server.stop() }
        let t = TestServer.base - 3600
        var batch = [IngestTests.started("big", at: t)]
        // Two pushes at each instant: ties in `occurred_at` keep arrival order across pages.
        for i in 0..<1_199 { batch.append(Scenario.push("big", "p\(i)", at: t + 1 + Double(i / 2))) }
        // At most 1000 events a request.
        #expect(try server.post(events: Array(batch.prefix(600))).status == 200)
        #expect(try server.post(events: Array(batch.dropFirst(600))).status == 200)

        for route in ["/api/bookings/BK-big", "/api/activities/big"] {
            let first = try server.json(route)
            #expect(Self.events(first).count == EventPage.pageLimit.defaultValue, "\(route)")
            #expect(first["next_cursor"]?.stringValue != nil)
            let whole = Self.events(try server.json(route + "?limit=5000"))
            #expect(whole.count == 1_200)
            let pages = try Self.allPages(server, route, limit: 250)
            #expect(pages.map(\.count) == [250, 250, 250, 250, 200], "\(route)")
            #expect(pages.flatMap { $0 } == whole, "the pages are the whole history, in order, once")
            // A page of a past instant pages what happened by then.
            let past = try Self.allPages(server, route + "?at=" + RFC3339.format(t + 100), limit: 150)
            #expect(past.map(\.count) == [150, 51], "\(route): the start and 200 pushes by then")
        }
    }

    @Test(arguments: ["limit=0", "limit=5001", "limit=+5", "limit=x", "cursor=nan~1", "cursor=1~x", "cursor=1", "cursor=1~2~3"])
    func aBadPageIsA400(_ query: String) throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [IngestTests.started("a")]).status == 200)
        for route in ["/api/bookings/BK-a", "/api/activities/a"] {
            #expect(try server.get(route + "?" + query).status == 400, "\(route)?\(query)")
        }
    }

    @Test func historyReadsBeyondTheLimitWaitThenGiveUp() throws {
        let limit = ConcurrencyLimit(1)
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        Thread { limit.run { entered.signal(); release.wait() } }.start()
        entered.wait()
        #expect(limit.run(waitingAtMost: 0.2) { 1 } == nil)
        release.signal()
        #expect(limit.run(waitingAtMost: 5) { 2 } == 2)
    }
}
