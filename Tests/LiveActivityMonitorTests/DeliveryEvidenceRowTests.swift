import Foundation
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// The `activities.delivery` column: a fixed-size binary form (version 2), and the rows written
/// before it (version 1, JSON text) still read; the header alone, and the merge of a row's
/// known contents with a record's tail.
struct DeliveryEvidenceRowTests {
    static func evidence() -> DeliveryEvidence {
        var e = DeliveryEvidence()
        e.remember(digest: 0xdead_beef_0123_4567, timestamp: 1_795_000_000.125, push: (seq: 42, sentAt: 1_795_000_001.5))
        e.remember(digest: .max, timestamp: 1.8e12, push: nil)
        e.lastConfirmedAt = 1_795_000_009.25
        e.missed = 3
        return e
    }

    @Test func theBinaryFormRoundTrips() throws {
        let e = Self.evidence()
        let bytes = try #require(e.stored)
        #expect(bytes.first == 2)
        #expect(bytes.count == 17 + 32 * 2)
        #expect(DeliveryEvidence(stored: bytes) == e)
        #expect(DeliveryEvidence().stored == nil, "empty evidence is a null column")
        #expect(DeliveryEvidence(stored: Array(bytes.dropLast(5))).known.count == 1, "a cut row keeps what reads")
    }

    @Test func aRowInTheFirstFormStillReads() {
        let text = """
            {"confirmed_at":1795000009.25,"missed":3,"known":[{"digest":"deadbeef01234567","timestamp":1795000000.125,\
            "push":42,"sent_at":1795000001.5},{"digest":"ffffffffffffffff","timestamp":1800000000000,"push":null,"sent_at":null}]}
            """
        #expect(DeliveryEvidence(stored: Array(text.utf8)) == Self.evidence())
    }

    /// Version 1, as session 16's writer wrote it: the header, a count byte, the entries.
    static func version1(_ e: DeliveryEvidence) -> [UInt8] {
        let v2 = e.stored ?? []
        return [1] + v2[1..<17] + [UInt8(e.known.count)] + v2[17...]
    }

    @Test func aRowInVersion1StillReads() {
        let e = Self.evidence()
        #expect(DeliveryEvidence(stored: Self.version1(e)) == e)
    }

    /// Start-up reads the first 17 bytes of a binary row (`headSQL`): the header, the entries
    /// left in the row; a JSON row is read whole.
    @Test func theHeaderAloneLeavesTheEntriesInTheRow() throws {
        let e = Self.evidence()
        for bytes in [try #require(e.stored), Self.version1(e)] {
            let head = bytes.prefix(17).withUnsafeBytes { DeliveryEvidence(storedHead: $0) }
            #expect(head.knownInRow && head.known.isEmpty)
            #expect(head.lastConfirmedAt == e.lastConfirmedAt && head.missed == e.missed)
            var whole = head
            whole.takeBack(row: e.known)
            #expect(whole == e)
        }
        let json = Array(#"{"missed":1,"known":[{"digest":"ff","timestamp":5}]}"#.utf8)
        let read = json.withUnsafeBytes { DeliveryEvidence(storedHead: $0) }
        #expect(!read.knownInRow && read.known.count == 1 && read.missed == 1)
    }

    /// The update's merge in SQLite (`mergeSQL`) against the list kept whole: rows in either
    /// form or none, tails of none to more than `maxKnown`.
    @Test func theMergeInTheRowIsTheNewestOfRowAndTail() throws {
        let db = try Database(path: ":memory:")
        try db.execute("CREATE TABLE activities (activity_id TEXT PRIMARY KEY, delivery TEXT)")
        func entries(_ n: Int, from: Int) -> [DeliveryEvidence.Known] {
            (0..<n).map { .init(digest: UInt64(from + $0), timestamp: Double(from + $0), push: $0 % 2 == 0 ? (seq: Int64(from + $0), sentAt: 1.5) : nil) }
        }
        for rowCount in [0, 1, 5, 8] {
            for form in ["null", "v1", "v2"] where (form == "null") == (rowCount == 0) {
                for tailCount in [0, 1, 3, 7, 8] {
                    var row = DeliveryEvidence()
                    row.missed = 2
                    for k in entries(rowCount, from: 0) { row.remember(digest: k.digest, timestamp: k.timestamp, push: k.push) }
                    let stored: SQLiteValue = form == "null" ? .null : .blob(form == "v1" ? Self.version1(row) : row.stored!)
                    try db.run("INSERT OR REPLACE INTO activities VALUES ('a', ?)", [stored])
                    // The record holds the header and a tail; the row, what it held before.
                    var record = DeliveryEvidence(confirmedAt: 7.5, missed: 3, knownInRow: true)
                    for k in entries(tailCount, from: 100) { record.remember(digest: k.digest, timestamp: k.timestamp, push: k.push) }
                    try db.run("UPDATE activities SET delivery = \(DeliveryEvidence.mergeSQL) WHERE activity_id = 'a'",
                               [.blob(record.storedHead), .blob(record.storedEntries)])
                    let merged = try db.query("SELECT delivery FROM activities").first?[0].blobValue
                    var expected = record
                    expected.takeBack(row: row.known)
                    #expect(merged == expected.stored, "\(form) row of \(rowCount), tail of \(tailCount)")
                    #expect(Array(expected.known) == Array((entries(rowCount, from: 0) + entries(tailCount, from: 100)).suffix(8)))
                }
            }
        }
    }
}
