import Foundation
import JSON
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// `RowWrite.sql` and `ActivityRecord.bind(to:as:)` follow one rule (`RowWrite.sets`): every
/// kind of row write sets the columns it names, each to the record's own value, and leaves
/// every other column as stored. A binding that skipped or added one would shift each later
/// column, or leave the last parameter unbound (null), which no error reports.
@Suite struct RowWriteTests {
    static let kinds: [RowWrite] = [.whole] + [false, true].flatMap { dismissal in
        [RecordTexts(), .attributes, .contentState, .both].flatMap { leaving in
            [false, true].map { RowWrite(insert: false, setsDismissal: dismissal, leaving: leaving, mergesKnown: $0) }
        }
    }

    /// One activity's record, then the same activity with every column of the row changed.
    static func records() -> (before: ActivityRecord, after: ActivityRecord) {
        var before = ActivityRecord(activityID: "ride-1", bookingID: "BK-1", attributesType: "RideAttributes", startedAt: 1_000)
        before.attributes = JSONText(written: #"{"driver":"Ana"}"#)
        before.contentState = JSONText(written: #"{"progress":0.1}"#)
        before.tokenFingerprint = "0011223344556677"
        var after = ActivityRecord(activityID: "ride-1", bookingID: "BK-2", attributesType: "TimerAttributes",
                                   startedAt: 2_000, source: .pushToStart)
        after.app = "com.example.rides"
        after.attributes = JSONText(written: #"{"driver":"Bo"}"#)
        after.contentState = JSONText(written: #"{"progress":0.9}"#)
        after.contentTimestamp = 2_100
        after.staleDate = 2_200
        after.relevanceScore = 0.5
        after.endedAt = 2_300
        after.dismissedAt = 2_400
        after.tokenFingerprint = "8899aabbccddeeff"
        after.lastPush = .init(status: 410, reason: "Unregistered", latencyMs: 12, priority: 5, at: 2_050)
        after.undecodable = .init(at: 2_060, detail: "progress: a string")
        after.channelID = "Y2hhbm5lbA"
        after.reportedStale = true
        after.staleCounted = true
        after.endedBy = .push
        after.dismissalPolicy = .immediate
        after.dismissalDate = 2_450
        after.tokenRotations = 2
        after.tokenRotatedAt = 2_030
        after.tokenInvalidReason = "Unregistered"
        after.priority10.record(2_040)
        after.delivery.remember(digest: 7, timestamp: 2_045, push: (seq: 9, sentAt: 2_044))
        after.startDate = 1_990
        return (before, after)
    }

    /// The row of `ride-1` after `writes`, each of a record by a kind of write, in order.
    static func row(after writes: [(ActivityRecord, RowWrite)]) throws -> [SQLiteValue] {
        let db = try Database(path: ":memory:")
        try db.execute("CREATE TABLE activities (" + RowWrite.columns.joined(separator: ", ")
                       + ", PRIMARY KEY (activity_id))")
        for (record, write) in writes {
            let statement = try db.prepare(write.sql)
            try record.bind(to: statement, as: write)
            _ = try statement.step()
            #expect(db.changes == 1)
        }
        return try #require(try db.query(ActivityRecord.selectSQL).first)
    }

    @Test func everyKindOfWriteSetsTheColumnsItNamesAndLeavesTheRest() throws {
        let (before, after) = Self.records()
        let old = try Self.row(after: [(before, .whole)])
        let new = try Self.row(after: [(after, .whole)])
        for (i, column) in ActivityRecord.columns.enumerated() where column != "activity_id" {
            #expect(old[i] != new[i], "the two records differ in \(column)")
        }
        for write in Self.kinds {
            let row = try Self.row(after: [(before, .whole), (after, write)])
            for (i, column) in ActivityRecord.columns.enumerated() {
                // A merged `delivery` is the row's known contents and the record's (DeliveryEvidenceRowTests).
                if column == "delivery", write.mergesKnown { continue }
                #expect(row[i] == (write.sets(column) ? new[i] : old[i]), "\(column) after \(write)")
            }
        }
    }
}
