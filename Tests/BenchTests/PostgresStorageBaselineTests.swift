import PostgresDB
import Testing
import TestSupport
@testable import live_activity_monitor_bench

@Suite struct PostgresStorageBaselineTests {
    /// As SQLite's: `fill` brings the database to a size (the batched server's before its round)
    /// and never shrinks or passes it; more rows than the lines take them again under new ids.
    @Test func fillReachesASizeAndInsertTakesTheLinesAgain() throws {
        let uri = try PostgresCluster.database()
        let storage = try PostgresStorageBaseline(uri: uri, events: StorageBaselineTests.lines(30))
        let db = try PostgresConnection(uri: uri)
        func events() throws -> Int64? { try db.scalar("SELECT count(*) FROM events")?.int64Value }
        try storage.fill(to: 45)
        #expect(try events() == 45)
        try storage.fill(to: 10)
        #expect(try events() == 45)
        #expect(try storage.insert(75, perTransaction: 8) > 0)
        #expect(try events() == 120)
        // Every event under an id of its own (the ids table keeps the first of a repeated one).
        #expect(try db.scalar("SELECT count(*) FROM event_keys")?.int64Value == 120)
    }

    /// A second limit on the same database finds its keys taken (the store would skip those
    /// events as duplicates): it must fail, not report a rate for work not done.
    @Test func insertRefusesADatabaseThatAlreadyHoldsItsKeys() throws {
        let uri = try PostgresCluster.database()
        _ = try PostgresStorageBaseline(uri: uri, events: StorageBaselineTests.lines(30)).insert(30, perTransaction: 10)
        let again = try PostgresStorageBaseline(uri: uri, events: StorageBaselineTests.lines(30))
        #expect(throws: BenchError.self) { _ = try again.insert(30, perTransaction: 10) }
    }
}
