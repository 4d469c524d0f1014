import Testing
@testable import LiveActivityMonitor

/// Every case of Fixtures/lockscreen-rules.json (cases 1–18, and the version 2 cases whose
/// features are built) in both tiers: in process through
/// `buildMonitor`'s router, and over HTTP to the real server. One runner (`LockScreenVectors`)
/// makes the same requests and assertions in each:
/// - events posted at their own time on a manual clock, each expectation read back at its time;
/// - metrics from a fresh monitor that took all events at time 0;
/// - each expectation asked with `?at=` after all events (server-side replay).
@Suite struct LockScreenVectorTests {
    /// The 30 cases of docs/vectors/lockscreen-rules.json (1–18 version 1, 19–30 version 2), copied unchanged.
    @Test func fixtureCasesAreReferenceCases() {
        #expect(LockScreenVectors.cases.count == 30)
        #expect(LockScreenVectors.channelCases.count == 4)
        let reference = Dictionary(LockScreenVectors.referenceCases.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
        for c in LockScreenVectors.cases {
            #expect(reference[c.name] == c.value, "\(c.name) differs from docs/vectors/lockscreen-rules.json")
        }
    }

    @Test(arguments: MonitorTier.allCases, LockScreenVectors.cases + LockScreenVectors.channelCases)
    func expectations(_ tier: MonitorTier, _ c: LockScreenVectors.Case) throws {
        try tier.run { try LockScreenVectors.expectations(c, $0) }
    }

    @Test(arguments: MonitorTier.allCases, (LockScreenVectors.cases + LockScreenVectors.channelCases).filter { $0.value["metrics"] != nil })
    func metrics(_ tier: MonitorTier, _ c: LockScreenVectors.Case) throws {
        try tier.run { try LockScreenVectors.metrics(c, $0) }
    }

    @Test(arguments: MonitorTier.allCases, LockScreenVectors.cases + LockScreenVectors.channelCases)
    func replayedAtEachInstant(_ tier: MonitorTier, _ c: LockScreenVectors.Case) throws {
        try tier.run { try LockScreenVectors.replay(c, $0) }
    }
}
