import PostgresDB
import SQLiteDB

/// `migrate`: copies a stopped SQLite store into an empty PostgreSQL database, table by table in
/// batches (one transaction each), then counts the rows on both sides.
///
/// The rows are copied as they are (events with their `seq`, activities as the SQLite store
/// wrote them, counters, shapes, the push-to-start book, channels): the PostgreSQL store then
/// loads the state the SQLite store had, and no rule runs twice. That needs a file whose tables
/// include every event (a server stopped cleanly): one left by a crash is refused, since only
/// a start of the SQLite store can replay its last events with the server's own settings.
struct SQLiteToPostgres {
    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    /// Rows in the SQLite file and in PostgreSQL after the copy, per table.
    struct Count: Equatable {
        let table: String
        let source: Int
        let target: Int
    }

    let source: Database
    let target: PostgresConnection
    var batchSize = 5000
    /// Told each table as it is copied (the command prints it).
    var progress: (String) -> Void = { _ in }

    /// Refuses a file of an older version (serve upgrades it) or one whose tables are behind its events.
    static func checkSource(_ db: Database, path: String) throws {
        try Schema.requireCurrentMonitorDatabase(db, path: path)
        let applied = try db.scalar("SELECT applied_seq FROM store_state")?.int64Value ?? 0
        let last = try db.scalar("SELECT coalesce(max(seq), 0) FROM events")?.int64Value ?? 0
        guard applied >= last else {
            throw Refused(description: "\(path) was not stopped cleanly: its last \(last - applied) events are not in its "
                          + "tables yet. Start `live-activity-monitor serve --db \(path)` on it once (with its usual "
                          + "options) and stop it (SIGTERM), then migrate")
        }
    }

    /// Refuses a database that holds any monitor row: the copy keeps `seq` and keys, and the
    /// state it loads must be the file's alone.
    static func checkTargetEmpty(_ db: PostgresConnection) throws {
        let taken = try (["activities"] + MigratedTable.all.map(\.name)).filter { table in
            try db.query("SELECT EXISTS (SELECT 1 FROM \(table))").rows.first?.first?.boolValue ?? false
        }
        guard taken.isEmpty else {
            throw Refused(description: "the PostgreSQL database is not empty (rows in \(taken.joined(separator: ", "))): "
                          + "migrate copies into an empty database only; create a new one (createdb) and give its URI")
        }
    }

    /// Copies every table, then counts; the counts are equal unless something wrote meanwhile.
    func copy() throws -> [Count] {
        var counts: [Count] = []
        for table in MigratedTable.all {
            progress(table.name)
            try copy(table)
            if table.name == "events" {
                let last = try source.scalar("SELECT coalesce(max(seq), 0) FROM events")?.int64Value ?? 0
                // New events number on from the file's last.
                if last > 0 { try target.prepared("SELECT setval('events_seq', $1::bigint)", [.integer(last)]) }
                // The days of each activity and booking, as the writer files them with its events.
                try target.execute(PostgresEventDays.fillSQL)
            }
            counts.append(try count(table.name, sourceSQL: "SELECT count(*) FROM (\(table.select))"))
        }
        progress("activities")
        try copyActivities()
        counts.append(try count("activities", sourceSQL: "SELECT count(*) FROM activities"))
        return counts
    }

    private func copy(_ table: MigratedTable) throws {
        let select = try source.prepare(table.select)
        var batch: [[PostgresValue]] = []
        while try select.step() {
            batch.append(table.values(select.row()))
            if batch.count == batchSize { try insert(batch, into: table); batch = [] }
        }
        try insert(batch, into: table)
    }

    private func insert(_ rows: [[PostgresValue]], into table: MigratedTable) throws {
        guard !rows.isEmpty else { return }
        if table.name == "events", let day = table.dayColumn {
            // Outside the transaction, as the writer makes them (`PostgresEventPartitions.ensure`).
            try PostgresEventPartitions.ensure(Set(rows.compactMap { $0[day].int64Value }), target)
        }
        let columns = try table.columns.indices.map { c in try PostgresValue.array(rows.map { $0[c] }) }
        try target.transaction { _ = try target.prepared(table.insertSQL, columns) }
    }

    /// Activities go through `ActivityRecord`, read as the SQLite store reads them and written as
    /// the PostgreSQL store writes them (their columns' types differ: flags, per-minute counts).
    private func copyActivities() throws {
        let select = try source.prepare(ActivityRecord.selectSQL + " ORDER BY activity_id")
        let writer = PostgresCommitWriter(target)
        var batch: [ActivityRecord] = []
        func flush() throws {
            let records = batch
            try target.transaction { try writer.upsert(records) }
            batch = []
        }
        while try select.step() {
            batch.append(try ActivityRecord(row: select))
            if batch.count == batchSize { try flush() }
        }
        try flush()
    }

    private func count(_ table: String, sourceSQL: String) throws -> Count {
        let source = Int(try source.scalar(sourceSQL)?.int64Value ?? 0)
        let target = Int(try target.query("SELECT count(*) FROM \(table)").rows.first?.first?.int64Value ?? 0)
        return Count(table: table, source: source, target: target)
    }
}
