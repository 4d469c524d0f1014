import Foundation
import SQLiteDB
import Testing
@testable import live_activity_monitor_bench

@Suite struct StorageBaselineTests {
    static func lines(_ count: Int) -> [String] {
        (0..<count).map { Dataset.wrkEvent(run: "st", counter: $0 + 1, activityPrefix: "wa", activities: 10, base: 1_700_000_000) }
    }

    /// Every row stored, and the per-row figures divide by them.
    @Test func insertAllStoresEveryRowAndCountsPerRow() throws {
        let directory = try Self.newDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = try StorageBaseline(path: directory + "/storage.sqlite", durability: .normal, events: Self.lines(30))
        let first = try storage.insertAll(perTransaction: 7)
        let second = try storage.insertAll(perTransaction: 30)   // new ids each round
        #expect(first.rows == 30 && second.rows == 30)
        #expect(first.cpuMicrosecondsPerRow == first.cpuSeconds / 30 * 1e6)
        #expect(first.rowsPerSecond == 30 / first.seconds)
    }

    /// More rows than the lines take the lines again under new ids; `fill` brings the file to
    /// a size (the batched server's before its round) and never shrinks or passes it.
    @Test func insertTakesTheLinesAgainAndFillReachesASize() throws {
        let directory = try Self.newDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/storage.sqlite"
        let storage = try StorageBaseline(path: path, durability: .normal, events: Self.lines(30))
        try storage.fill(to: 45)
        #expect(try Self.events(path) == 45)
        try storage.fill(to: 10)
        #expect(try Self.events(path) == 45)
        #expect(try storage.insert(75, perTransaction: 8).rows == 75)
        #expect(try Self.events(path) == 120)
    }

    /// However small its transactions, the rows are filed under their activities by the end of
    /// the call (the writer files less often than it commits, and so does the baseline).
    @Test func insertFilesEveryRowByItsEnd() throws {
        let directory = try Self.newDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/storage.sqlite"
        let storage = try StorageBaseline(path: path, durability: .normal, events: Self.lines(30))
        #expect(try storage.insert(45, perTransaction: 4).rows == 45)
        let db = try Database(path: path)
        let filed = try db.scalar("SELECT (SELECT count(*) FROM activity_events) + (SELECT count(*) FROM activity_events_numbered)")
        #expect(filed?.int64Value == 45)
        #expect(try db.scalar("SELECT applied_seq = (SELECT max(seq) FROM events) FROM store_state")?.int64Value == 1)
    }

    /// A new directory for one test's files (the test removes it).
    static func newDirectory() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    static func events(_ path: String) throws -> Int {
        let db = try Database(path: path)
        return Int(try db.scalar("SELECT count(*) FROM events")?.int64Value ?? -1)
    }

    /// A second storage limit on the same file (what the stages phase did after the throughput
    /// phase) would only find its ids taken: it must fail, not report a rate of lookups.
    @Test func insertAllRefusesAFileThatAlreadyHoldsItsRows() throws {
        let directory = try Self.newDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/storage.sqlite"
        _ = try StorageBaseline(path: path, durability: .normal, events: Self.lines(30)).insertAll(perTransaction: 10)
        let again = try StorageBaseline(path: path, durability: .normal, events: Self.lines(30))
        #expect(throws: BenchError.self) { _ = try again.insertAll(perTransaction: 10) }
    }
}

@Suite struct StoreProgressTests {
    /// A round is the difference of two readings; its mean commit is whole, and a round whose
    /// commits were not counted is one commit.
    @Test func aRoundIsTheDifferenceAndItsMeanCommitIsWhole() {
        let round = StoreProgress(events: 31_000, commits: 12).since(StoreProgress(events: 1_000, commits: 10))
        #expect(round == StoreProgress(events: 30_000, commits: 2))
        #expect(round.eventsPerCommit == 15_000)
        #expect(StoreProgress(events: 29_999, commits: 2).eventsPerCommit == 14_999)
        #expect(StoreProgress(events: 500, commits: 0).eventsPerCommit == 500)
    }
}

@Suite struct ThreadCPUTests {
    /// Fields are counted after the command name's last `)`, which may hold spaces.
    @Test func readsUserAndSystemTicksAfterTheCommandName() {
        let stat = "4242 (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 100 0 0"
        #expect(ThreadCPU.seconds(stat: stat, ticksPerSecond: 100) == 3.0)
        #expect(ThreadCPU.seconds(stat: "no command name", ticksPerSecond: 100) == nil)
    }

    /// `schedstat`'s first field is nanoseconds on a processor.
    @Test func readsNanosecondsFromSchedstat() {
        #expect(ThreadCPU.seconds(schedstat: "567303308 287506740 2300\n") == 0.567303308)
        #expect(ThreadCPU.seconds(schedstat: "") == nil)
    }

    /// A thread started between the readings counts from zero; the others by their difference.
    @Test func usedCountsThreadsStartedInBetween() {
        let before = ["10": 1.0, "11": 2.0]
        let after = ["10": 1.5, "11": 2.0, "12": 0.25]
        #expect(ThreadCPU.used(from: before, to: after) == 0.75)
    }
}
