import Testing
@testable import LiveActivityMonitor

/// `?limit=` is one grammar on every route that pages (`PageLimit`): decimal digits from 1 to
/// the route's most; anything else, a sign included, is a 400 naming the route's range.
@Suite struct PageLimitTests {
    /// Each paging route with its most (the list, an activity's and a booking's events, triage,
    /// channels).
    static let routes: [(path: String, most: Int)] = [
        ("/api/activities", ReadHandlers.pageLimit.most),
        ("/api/activities/a", EventPage.pageLimit.most),
        ("/api/bookings/BK-a", EventPage.pageLimit.most),
        ("/api/triage", ReadHandlers.triageLimit.most),
        ("/api/channels", ReadHandlers.channelPageLimit.most),
    ]

    @Test func everyPagingRouteReadsLimitTheSameWay() throws {
        try MonitorTier.inProcess.run { m in
            #expect(try m.post(events: [IngestTests.started("a")]).status == 200)
            for (path, most) in Self.routes {
                let taken = ["1", "05", "\(most)"]
                // "%2B5" arrives as "+5" and "+5" as " 5": Int() alone would have read the first.
                let refused = ["0", "\(most + 1)", "", "%2B5", "+5", "-1", "-0", "1e2", "5.0", "x", "99999999999999999999", "%EF%BC%95"]
                for value in taken {
                    #expect(try m.get("\(path)?limit=\(value)").status == 200, "\(path)?limit=\(value)")
                }
                for value in refused {
                    let answer = try m.get("\(path)?limit=\(value)")
                    #expect(answer.status == 400, "\(path)?limit=\(value)")
                    #expect(answer.text.contains("limit must be an integer from 1 to \(most)"), "\(path)?limit=\(value): \(answer.text)")
                }
            }
        }
    }

    @Test func aMissingLimitIsTheRoutesDefault() throws {
        let limit = PageLimit(defaultValue: 7, most: 9)
        #expect(try limit.parse([:]) == 7)
        #expect(try limit.parse(["limit": "9"]) == 9)
        #expect(throws: APIError.self) { try limit.parse(["limit": "10"]) }
    }
}
