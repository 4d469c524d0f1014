import Foundation
import Prometheus
import SQLiteDB

/// Start-up's load: memory rebuilt from the current-state and counters tables, the live rows
/// read on several connections at once and the table built from them at once
/// (ARCHITECTURE.md, "Loading a million live activities").
extension EventStore {
    /// Rebuilds memory from the current-state and counters tables (no replay of the event log),
    /// with the gauges counted from `now`.
    ///
    /// - Parameter readers: connections that read the live rows at once (`liveRecords`); by
    ///   default one per processor when there are enough rows.
    static func load(_ db: Database, reservedTypes: [String], declaredShapes: [String: ObjectShape],
                     maxLiveActivities: Int, priority10Budget: Int, now: Double,
                     readers: Int? = nil) throws -> MonitorState {
        var s = MonitorState()
        var learned: [String: ObjectShape] = [:]
        let shapes = try db.prepare("SELECT attributes_type, shape FROM content_shapes")
        while try shapes.step() {
            if let type = shapes.text(0), let shape = MonitorState.storedShape(shapes.text(1)) { learned[type] = shape }
        }
        s.shapes = ContentShapes(judging: true, declared: declaredShapes, learned: learned)
        let records = try liveRecords(db, maxLiveActivities: maxLiveActivities, readers: readers)
        s.load(records: consume records, priority10Budget: priority10Budget, gaugesFrom: now)
        var appStarts: [ExactString: Double] = [:]
        let counters = try db.prepare("SELECT key, value, histogram FROM counters")
        while try counters.step() {
            s.loadCounter(key: counters.text(0) ?? "", value: counters.double(1), histogram: counters.text(2), appStarts: &appStarts)
        }
        s.assignLabels(reserved: reservedTypes, appStarts: appStarts)
        s.publish(try loadStarts(db))
        s.channels = try ChannelBook.load(db)
        return s
    }

    /// The live rows as records, in rowid order, read over `readers` connections at once (the
    /// ranges of rowids `LiveRowRanges` deals them), from their `held_record` column: without
    /// their texts (left to the rows: `ActivityRecord.textsInRow`).
    static func liveRecords(_ db: Database, maxLiveActivities: Int, readers: Int?) throws -> RecordStorage {
        let live = try LiveRowRanges.liveCount(db)
        // More than memory holds (`evictOverflow`): the newest-started (a sort, so only then).
        guard live <= maxLiveActivities else {
            return try records(db, " WHERE dismissed_at IS NULL ORDER BY started_at DESC LIMIT ?",
                               [.integer(Int64(maxLiveActivities))], expected: maxLiveActivities)
        }
        let ranges = try LiveRowRanges(db, live: live, readers: readers)
        guard ranges.parts.count > 1 else { return try records(db, " WHERE dismissed_at IS NULL", expected: live) }
        let path = db.path, parts = ranges.parts
        // Each part made in place in one block, in a slice of its own: no part is copied.
        let read = try RecordSlices.make(ranges, threadName: "store-load") {
            let reader = try Database(path: path, mode: .readOnly)
            let rows = try reader.prepare(LiveRowRanges.selectSQL)
            let next = try recordReader(rows, columnsOn: reader)
            return { k in
                rows.reset()
                try rows.bind([.integer(parts[k].firstRowid), .integer(parts[k].lastRowid)])
                return next
            }
        }
        // The rows moved between counting and reading (another process wrote despite the lock):
        // read them again on one connection.
        return try read ?? records(db, " WHERE dismissed_at IS NULL", expected: live)
    }

    /// The rows of `activities` that `condition` selects, as records, with room for `expected`.
    private static func records(_ db: Database, _ condition: String, _ bindings: [SQLiteValue] = [],
                                expected: Int) throws -> RecordStorage {
        let rows = try db.prepare(LiveRowRanges.selectHeldRecordsSQL + condition)
        try rows.bind(bindings)
        var records = RecordStorage()
        records.reserveCapacity(expected)
        let next = try recordReader(rows, columnsOn: db)
        try withUnsafeTemporaryAllocation(of: ActivityRecord.self, capacity: 1) { slot in
            while try next(slot.baseAddress!) { records.append(slot.baseAddress!.move()) }
        }
        return records
    }

    /// The records of `rows` (selected with `LiveRowRanges.selectHeldRecordsSQL`), one per call
    /// made in the slot given, sharing their types and apps (`RecentStrings`): from the row's
    /// `held_record` (`ActivityRecord.heldRecord`), or from its columns, read on `db`, when it
    /// has none this version reads.
    private static func recordReader(_ rows: Statement, columnsOn db: Database) throws -> RecordSlices.Reader {
        var recent = RecentStrings()
        let byColumns = try db.prepare(ActivityRecord.selectHeldSQL + " WHERE rowid = ?")
        return { slot in
            guard try rows.step() else { return false }
            // Made in the slot inside the closure: a record returned through `withBytes`
            // (generic, in another module) was copied once more, its references retained.
            let made = rows.withBytes(1) { bytes in
                guard let bytes, let record = ActivityRecord(heldRecord: bytes, sharing: &recent) else { return false }
                slot.initialize(to: record)
                return true
            }
            if made { return true }
            let rowid = rows.int64(0)
            try byColumns.bind([.integer(rowid)])
            defer { byColumns.reset() }
            // The same read as `rows`'s: the row it just returned is there.
            guard try byColumns.step() else { throw VanishedRow(rowid: rowid) }
            slot.initialize(to: try ActivityRecord(row: byColumns, sharing: &recent, heldOnly: true))
            return true
        }
    }
}

/// A row that start-up's scan returned and a lookup in the same read did not find.
private struct VanishedRow: Error, CustomStringConvertible {
    let rowid: Int64
    var description: String { "activities row \(rowid) was not found by its rowid in the read that returned it" }
}
