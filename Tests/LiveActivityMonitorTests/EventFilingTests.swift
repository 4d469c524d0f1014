import Foundation
import JSON
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// Events are filed under their activity's number when it has a row (`activities.number`, given
/// by the insert's trigger in the order rows are first written), else under its id
/// (`activity_events`); readers read both through `filed_activity_events` (Schema, migration 16).
@Suite(.serialized) struct EventFilingTests {
    /// Every activity's and booking's history from the store equals a scan of the events table,
    /// and every event is filed once.
    static func expectHistoriesWhole(_ server: TestServer, _ comment: String) throws {
        try ReplayTests.expectHistoriesMatchScan(server, activities: ReplayTests.ids + ["never-started", "late-1"],
                                                 bookings: ReplayTests.bookings + ["BK-late-1"], comment)
        let db = try Database(path: server.configuration.databasePath, mode: .readOnly)
        let filing = try ReplayTests.filing(db)
        #expect(filing.unfiled == 0 && filing.orphans == 0, "\(comment): \(filing)")
    }

    /// A push to an activity the monitor never saw started: it has no row.
    static func neverStarted(at t: Double) -> JSONValue {
        ContentShapeTests.push("never-started", "ns-\(t)", at: t, ["v": 1])
    }

    /// Makes a file of the current version one from before the numbers (version 15): without
    /// the later migration's `booking_in_row`, entries filed by id again, the numbering's
    /// objects gone.
    static func rewindToBeforeNumbering(_ db: Database) throws {
        try BookingInRowTests.rewindToBeforeBookingInRow(db)
        try db.execute("""
            INSERT INTO activity_events (activity_id, seq)
                SELECT a.activity_id, n.seq FROM activities a JOIN activity_events_numbered n ON n.number = a.number;
            DROP VIEW filed_activity_events;
            DROP TRIGGER activities_numbered;
            DROP TRIGGER activity_events_numbered_follow_row_deletes;
            DROP TRIGGER activity_events_follow_deletes;
            DROP TABLE activity_events_numbered;
            ALTER TABLE activities DROP COLUMN number;
            ALTER TABLE store_state DROP COLUMN next_activity_number;
            """)
        try db.setUserVersion(15)
    }

    @Test func startedActivitiesAreFiledByNumberOthersById() throws {
        let server = try TestServer()
        defer { server.stop() }
        try ReplayTests.post(server)
        #expect(try server.post(events: [Self.neverStarted(at: server.time.value)]).status == 200)
        server.server.store.catchUp()
        try Self.expectHistoriesWhole(server, "caught up")

        let db = try Database(path: server.configuration.databasePath, mode: .readOnly)
        // Numbered in the order the rows were first written: distinct, no row without one.
        let numbers = try db.query("SELECT number FROM activities ORDER BY number").map { $0[0].int64Value }
        #expect(!numbers.isEmpty && !numbers.contains(nil) && Set(numbers).count == numbers.count, "\(numbers)")
        #expect(try db.scalar("SELECT next_activity_number > (SELECT max(number) FROM activities) FROM store_state") == .integer(1))
        // By id: only the activities without a row (ghost's events come before any start).
        let byID = try db.query("SELECT DISTINCT activity_id FROM activity_events").map { $0[0].textValue }
        #expect(Set(byID) == ["ghost", "never-started"])
        #expect(try db.scalar("SELECT count(*) FROM activity_events_numbered")?.int64Value ?? 0 > 10)
    }

    /// A whole write of a row already there (an upsert) keeps its number and its rowid: under
    /// `INSERT OR REPLACE` the row would be inserted again, under a new number.
    @Test func aWholeWriteKeepsTheRowsNumber() throws {
        let server = try TestServer()
        defer { server.stop() }
        try ReplayTests.post(server)
        server.server.store.catchUp()
        let path = server.configuration.databasePath
        let before = try Database(path: path, mode: .readOnly)
            .query("SELECT activity_id, number, rowid FROM activities ORDER BY activity_id")
        let rewritten = server.server.store.submit(.withConnection { db in
            var statements = RowStatements(db)
            for row in before {
                let record = try #require(try EventStore.loadRecord(row[0].textValue!, from: db))
                try statements.write(record, .whole)
            }
        })
        #expect(throws: Never.self) { try rewritten.get() }
        let after = try Database(path: path, mode: .readOnly)
            .query("SELECT activity_id, number, rowid FROM activities ORDER BY activity_id")
        #expect(before.count == ReplayTests.ids.count - 1 && after == before, "ghost never started; the rest kept")
        try Self.expectHistoriesWhole(server, "rewritten")
    }

    /// A row deleted (by retention, or by hand) files its events under its id again; deleting
    /// the events then deletes their entries, in either table.
    @Test func aDeletedRowFilesItsEventsByIDAgain() throws {
        let server = try TestServer()
        try ReplayTests.post(server)
        server.stop(keepFiles: true)
        defer { try? FileManager.default.removeItem(atPath: server.directory) }
        let db = try Database(path: server.configuration.databasePath)
        let filed = try db.scalar("SELECT count(*) FROM filed_activity_events WHERE activity_id = 'ride-1'")
        #expect(filed?.int64Value ?? 0 > 1)
        try db.run("DELETE FROM activities WHERE activity_id = 'ride-1'")
        #expect(try db.scalar("SELECT count(*) FROM activity_events WHERE activity_id = 'ride-1'") == filed)
        #expect(try ReplayTests.filing(db) == (0, 0))
        try db.run("DELETE FROM events WHERE activity_id IN ('ride-1', 'ride-2')")
        #expect(try db.scalar("SELECT count(*) FROM filed_activity_events WHERE activity_id IN ('ride-1', 'ride-2')") == .integer(0))
        #expect(try ReplayTests.filing(db) == (0, 0))
    }

    /// A file from before the numbers: its rows have none and their events stay filed by id,
    /// later ones too; activities started after the upgrade are numbered. Histories stay whole
    /// throughout.
    @Test func anOlderFileKeepsItsEntriesAndNumbersNewActivities() throws {
        let server = try ReplayTests.serverOnOlderFile(rewoundBy: Self.rewindToBeforeNumbering)
        defer { server.stop() }
        let db = try Database(path: server.configuration.databasePath, mode: .readOnly)
        #expect(try db.scalar("SELECT count(*) FROM activities WHERE number IS NOT NULL") == .integer(0))
        let t = server.time.value
        #expect(try server.post(events: [
            ContentShapeTests.push("ride-1", "after-upgrade", at: t, ["v": 2]),
            IngestTests.started("late-1", at: t + 1),
            Self.neverStarted(at: t + 2),
        ]).status == 200)
        server.server.store.catchUp()
        try Self.expectHistoriesWhole(server, "upgraded")
        #expect(try db.scalar("SELECT count(*) FROM activity_events WHERE activity_id = 'ride-1'")?.int64Value ?? 0 > 1)
        #expect(try db.scalar("SELECT number FROM activities WHERE activity_id = 'late-1'") == .integer(1))
        #expect(try db.scalar("SELECT count(*) FROM filed_activity_events f JOIN activity_events_numbered n ON n.seq = f.seq WHERE f.activity_id = 'late-1'") == .integer(1))
    }

    /// A catch-up whose events name only an older file's row (which has no number) still files
    /// them by id: the writer's note of the activities named (`DeferredWrites.named`) tells the
    /// catch-up whether that pass is needed, by each row's number, not by the row being there.
    @Test func eventsOfAnOlderRowAloneAreFiledByID() throws {
        let server = try ReplayTests.serverOnOlderFile(rewoundBy: Self.rewindToBeforeNumbering)
        defer { server.stop() }
        #expect(try server.post(events: [ContentShapeTests.push("ride-1", "older-row-only", at: server.time.value, ["v": 3])])
            .status == 200)
        server.server.store.catchUp()
        try Self.expectHistoriesWhole(server, "an older row's events alone")
    }
}
