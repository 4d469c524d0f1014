import Foundation
import JSON
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// Start-up reads each live row's record from its `held_record` column alone
/// (`ActivityRecord.heldRecord`): it must give exactly the record the row's columns give
/// (`init(row:heldOnly:)`), for every field, and a row without one must still load.
@Suite struct HeldRecordTests {
    /// A record with every field set (`RowWriteTests`' second record), odd values included: a
    /// fingerprint that is not 16 hex digits, strings longer than a one-byte length and not
    /// ASCII, negative and huge numbers.
    static func fullRecord() -> ActivityRecord {
        var r = RowWriteTests.records().after
        r.activityID = "Été-" + String(repeating: "x", count: 200)
        r.relevanceScore = -0.5
        r.tokenFingerprint = "not-hex-digits"
        r.tokenRotations = 1_000_000
        r.lastPush?.reason = "ExpiredToken ✗"
        r.undecodable = .init(at: 2_070, detail: "content_state: " + String(repeating: "é", count: 100))
        r.channelID = "channel-é"
        return r
    }

    /// What start-up holds of `record` once read back from its row.
    static func asHeld(_ record: ActivityRecord) -> ActivityRecord {
        var held = record
        held.leaveToRow()
        return held
    }

    static func readBack(_ record: ActivityRecord) -> ActivityRecord? {
        var recent = RecentStrings()
        return record.heldRecord.withUnsafeBytes { ActivityRecord(heldRecord: $0, sharing: &recent) }
    }

    @Test func everyFieldReadsBack() {
        let full = Self.fullRecord()
        #expect(Self.readBack(full) == Self.asHeld(full))
        // And with each optional part absent (the flags), a bare record, and a fingerprint of digits.
        let bare = ActivityRecord(activityID: "a", bookingID: nil, attributesType: "", startedAt: 0)
        #expect(Self.readBack(bare) == Self.asHeld(bare))
        var digits = bare
        digits.tokenFingerprint = TokenFingerprint.of("token")
        #expect(Self.readBack(digits) == Self.asHeld(digits))
        var pushWithoutReason = bare
        pushWithoutReason.lastPush = .init(status: 200, reason: nil, latencyMs: 0, priority: 5, at: 1)
        #expect(Self.readBack(pushWithoutReason) == Self.asHeld(pushWithoutReason))
    }

    /// A blob cut short, a later version's or trailing bytes is not read (the row's columns are).
    @Test func aDamagedBlobIsNotRead() {
        let bytes = Self.fullRecord().heldRecord
        var recent = RecentStrings()
        for damaged in [Array(bytes.dropLast()), Array(bytes.prefix(40)), [9] + bytes.dropFirst(), bytes + [0], []] {
            #expect(damaged.withUnsafeBytes { ActivityRecord(heldRecord: $0, sharing: &recent) } == nil)
        }
    }

    /// On a database of random activities of every kind: the bulk load (from `held_record`)
    /// equals the rows' columns read one by one; a dismissed row keeps no copy; a live row
    /// whose blob is missing or damaged is read from its columns.
    /// `body` given the closed file of a store of random activities of every kind
    /// (`StartupLoadTests.fill`), opened, with its path and clock.
    static func withFilledFile(seed: UInt64, activities: Int, _ body: (Database, String, Double) throws -> Void) throws {
        try withInProcessMonitor(configure: { $0.priority10Budget = StartupLoadTests.budget }) { monitor in
            StartupLoadTests.fill(KeptGaugeTests.Driver(monitor.monitor, time: monitor.time), seed: seed, activities: activities)
            monitor.store.close()
            try body(try Database(path: monitor.store.path), monitor.store.path, monitor.time.value)
        }
    }

    @Test func loadFromHeldRecordsEqualsTheColumns() throws {
        try Self.withFilledFile(seed: 3, activities: 400) { db, path, now in
            #expect(try db.scalar("SELECT count(*) FROM activities WHERE dismissed_at IS NOT NULL AND held_record IS NOT NULL")?.int64Value == 0)
            #expect(try db.scalar("SELECT count(*) FROM activities WHERE dismissed_at IS NULL AND held_record IS NULL")?.int64Value == 0)
            #expect(try db.scalar("SELECT count(*) FROM activities WHERE dismissed_at IS NOT NULL")?.int64Value ?? 0 > 0, "some dismissed")
            let (bulk, oneByOne) = try StartupLoadTests.loadBothWays(path, at: now, readers: 2)
            StartupLoadTests.expectEqual(bulk, oneByOne, at: now)

            try db.execute("""
                UPDATE activities SET held_record = NULL WHERE rowid IN (SELECT rowid FROM activities WHERE dismissed_at IS NULL LIMIT 5);
                UPDATE activities SET held_record = X'09' WHERE rowid IN (SELECT rowid FROM activities WHERE dismissed_at IS NULL AND held_record IS NOT NULL LIMIT 5)
                """)
            let (mended, columns) = try StartupLoadTests.loadBothWays(path, at: now, readers: 2)
            StartupLoadTests.expectEqual(mended, columns, at: now)
        }
    }

    /// Makes a file of the current version one from before `held_record` (version 14): without
    /// the column, and without the later migrations (`rewindToBeforeNumbering`).
    static func rewindToBeforeHeldRecord(_ db: Database) throws {
        try EventFilingTests.rewindToBeforeNumbering(db)
        try db.execute("ALTER TABLE activities DROP COLUMN \(ActivityRecord.heldRecordColumn)")
        try db.setUserVersion(14)
    }

    /// A file from before the column: the migration fills every live row's, and the load from
    /// them equals the columns.
    @Test func theMigrationFillsEveryLiveRow() throws {
        try Self.withFilledFile(seed: 4, activities: 300) { db, path, now in
            try Self.rewindToBeforeHeldRecord(db)
            try db.migrate(Schema.migrations)
            #expect(try db.scalar("SELECT count(*) FROM activities WHERE dismissed_at IS NULL AND held_record IS NULL")?.int64Value == 0)
            #expect(try db.scalar("SELECT count(*) FROM activities WHERE dismissed_at IS NULL")?.int64Value ?? 0 > 100)
            let (bulk, oneByOne) = try StartupLoadTests.loadBothWays(path, at: now, readers: 1)
            StartupLoadTests.expectEqual(bulk, oneByOne, at: now)
        }
    }
}
