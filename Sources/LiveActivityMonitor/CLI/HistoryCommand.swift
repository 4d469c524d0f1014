import Foundation
import PostgresDB
import SQLiteDB

/// `history <booking-id>`: the support timeline in a terminal or as a file, read-only.
enum HistoryCommand {
    static let formatOption = ArgumentParser.Option(
        name: "format", environment: nil, valueName: "text|ndjson|csv",
        help: "text (default): for a terminal; ndjson or csv: a file for a support ticket, each event with its effect.")

    static let parser = ArgumentParser(
        command: "history", usage: "history [--db PATH|URI] [--db-password-file F] [--format text|ndjson|csv] [rule options] [--] <booking-id>",
        summary: """
            Prints every activity and event of a booking in time order, each event with what it
            did to the lock screen (read-only; safe while the server runs), from the SQLite file
            or the PostgreSQL database (--db postgres://…). It judges as serve does with the same
            rule options (--start-window, --delivery-grace, --priority10-budget, or their
            environment variables): give those the server runs with. An id that starts with
            a dash goes after --: history -- -BK1.
            """,
        options: [CommandLineTool.dbOption, CommandLineTool.dbPasswordFileOption, formatOption] + EngineOptions.options)

    static func run(_ args: [String], environment: [String: String]) throws -> Int32 {
        guard let parsed = try CommandLineTool.parse(parser, args, environment) else { return 0 }
        guard parsed.positionals.count == 1 else { throw UsageError("history takes exactly one booking id") }
        let formatName = parsed.values["format"] ?? BookingTimeline.Format.text.rawValue
        guard let format = BookingTimeline.Format(rawValue: formatName) else {
            throw UsageError("--format must be text, ndjson or csv, not \"\(formatName)\"")
        }
        let booking = parsed.positionals[0]
        let settings = try EngineOptions.settings(parsed), now = Date().timeIntervalSince1970
        let found: BookingTimeline?, name: String
        switch try CommandLineTool.databaseLocation(parsed) {
        case .sqlite(let path):
            guard FileManager.default.fileExists(atPath: path) else { throw UsageError("no database at \(path)") }
            let db = try Database(path: path, mode: .readOnly)
            try Schema.requireCurrentMonitorDatabase(db, path: path)
            (found, name) = (try timeline(booking: booking, db: db, settings: settings, now: now), path)
        case .postgres(let uri, let password):
            let db = try CommandLineTool.existingPostgresDatabase(uri: uri, password: password)
            (found, name) = (try timeline(booking: booking, postgres: db, settings: settings, now: now), "the PostgreSQL database")
        }
        guard let timeline = found else {
            CommandLineTool.printError(BookingTimeline.printable("no booking \"\(booking)\" in \(name)"))
            return 1
        }
        print(timeline.render(format, now: now), terminator: "")
        return 0
    }

    /// The booking's timeline as the file holds it, or nil when it has no activity and no event;
    /// judged as a server with `settings` judges it at `now`.
    static func timeline(booking: String, db: Database, settings: EngineSettings,
                         now: Double) throws -> BookingTimeline? {
        let activities = try db.prepare(ActivityRecord.selectSQL + " WHERE booking_id = ? ORDER BY started_at, activity_id")
        try activities.bind(booking, at: 1)
        var records: [ActivityRecord] = []
        while try activities.step() { records.append(try ActivityRecord(row: activities)) }
        let rows = try EventStore.storedEvents(sql: EventStore.bookingEventsSQL, value: booking, in: db)
        guard !records.isEmpty || !rows.isEmpty else { return nil }
        let history = try BookingHistory(records: records, rows: rows, record: { try EventStore.loadRecord($0, from: db) },
                                         events: { try EventStore.storedEvents(sql: EventStore.activityEventsSQL, value: $0, in: db) })
        let context = HistoryReplay.Context(settings: settings, now: now,
                                            judged: try EventStore.judgedSuperseded(among: history.replayed, in: db),
                                            channels: try ChannelBook.load(db))
        return BookingTimeline(bookingID: booking, history: history, context: context)
    }

    /// The same from the PostgreSQL store's tables (read-only).
    static func timeline(booking: String, postgres db: PostgresConnection, settings: EngineSettings,
                         now: Double) throws -> BookingTimeline? {
        let records = try PostgresEventStore.records(bookingID: booking, db)
        let rows = try PostgresEventStore.storedEvents(bookingID: booking, db)
        guard !records.isEmpty || !rows.isEmpty else { return nil }
        let history = try BookingHistory(records: records, rows: rows, record: { try PostgresStateLoader.record($0, db) },
                                         events: { try PostgresEventStore.storedEvents(activityID: $0, db) })
        let context = HistoryReplay.Context(settings: settings, now: now,
                                            judged: try PostgresEventStore.judgedSuperseded(among: history.replayed, db),
                                            channels: try PostgresChannels.load(db))
        return BookingTimeline(bookingID: booking, history: history, context: context)
    }
}
