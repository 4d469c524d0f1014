import Foundation
import JSON
import SQLiteDB

/// `history <booking-id>`: the support timeline in a terminal, read-only.
enum HistoryCommand {
    static let parser = ArgumentParser(
        command: "history", usage: "history [--db PATH] [--] <booking-id>",
        summary: """
            Prints every activity and event of a booking in time order (read-only; safe while the
            server runs). An id that starts with a dash goes after --: history -- -BK1.
            """,
        options: [CommandLineTool.dbOption])

    static func run(_ args: [String], environment: [String: String]) throws -> Int32 {
        guard let parsed = try CommandLineTool.parse(parser, args, environment) else { return 0 }
        guard parsed.positionals.count == 1 else { throw UsageError("history takes exactly one booking id") }
        let path = parsed.values["db"] ?? MonitorConfiguration().databasePath
        guard FileManager.default.fileExists(atPath: path) else { throw UsageError("no database at \(path)") }
        let db = try Database(path: path, mode: .readOnly)
        try Schema.requireCurrentMonitorDatabase(db, path: path)
        let booking = parsed.positionals[0]
        let text = try report(booking: booking, db: db, now: Date().timeIntervalSince1970)
        guard let text else {
            CommandLineTool.printError(printable("no booking \"\(booking)\" in \(path)"))
            return 1
        }
        print(text, terminator: "")
        return 0
    }

    static func report(booking: String, db: Database, now: Double) throws -> String? {
        let activities = try db.prepare(ActivityRecord.selectSQL + " WHERE booking_id = ? ORDER BY started_at")
        try activities.bind(booking, at: 1)
        var lines: [String] = []
        while try activities.step() {
            let r = try ActivityRecord(row: activities)
            var line = "  \(r.activityID)  \(r.attributesType)  \(r.state(at: now).rawValue)"
            line += "  started \(RFC3339.format(r.startedAt))"
            if let ended = r.endedAt { line += ", ended \(RFC3339.format(ended)) by \(r.endedBy?.rawValue ?? "?")" }
            if let fp = r.tokenFingerprint { line += ", token \(fp)\(r.tokenInvalidated ? " (invalidated)" : "")" }
            lines.append(printable(line))
        }
        let events = try db.prepare(EventStore.bookingEventsSQL)
        try events.bind(booking, at: 1)
        var timeline: [String] = []
        while try events.step() {
            guard case .object(let e) = try JSONParser.parse(events.text(0) ?? "{}") else { continue }
            timeline.append(printable(describe(e)))
        }
        guard !lines.isEmpty || !timeline.isEmpty else { return nil }
        var out = printable("Booking \(booking)") + "\n\nActivities:\n"
        out += (lines.isEmpty ? ["  (none started)"] : lines).joined(separator: "\n") + "\n\nTimeline:\n"
        out += timeline.joined(separator: "\n") + "\n"
        return out
    }

    /// A line with control characters (escape sequences, line breaks) and bidi overrides shown as
    /// `\u{…}`: ids come from clients and must not drive the terminal or reorder what it shows.
    static func printable(_ line: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in line.unicodeScalars {
            let category = scalar.properties.generalCategory
            if category == .control || category == .lineSeparator || category == .paragraphSeparator
                || scalar.properties.isBidiControl {
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// One line per event: time, type, the push answer, the content.
    static func describe(_ e: JSONObject) -> String {
        func s(_ key: String) -> String? {
            switch e[key] {
            case .string(let v)?: v
            case .number(let n)?: n.literal
            default: nil
            }
        }
        var parts = [s("occurred_at") ?? "?", (s("type") ?? "?").padding(toLength: 22, withPad: " ", startingAt: 0),
                     s("activity_id") ?? "-"]
        if let event = s("event") {
            var push = "\(event) → \(s("status") ?? "?")"
            if let reason = s("reason") { push += " \(reason)" }
            push += ", \(s("latency_ms") ?? "?") ms, priority \(s("priority") ?? "10")"
            parts.append(push)
        }
        if let fp = s("token_fingerprint") { parts.append("token \(fp)") }
        if let policy = s("dismissal_policy") { parts.append("dismissal \(policy)") }
        if let date = s("dismissal_date") { parts.append("dismiss at \(date)") }
        if let stale = s("stale_date") { parts.append("stale at \(stale)") }
        if let content = e["content_state"], case .object(let o) = content {
            parts.append(o.entries.map { "\($0.key)=\($0.value.jsonString)" }.joined(separator: " "))
        }
        return "  " + parts.joined(separator: "  ")
    }
}
