import JSON
import LiveActivityWire
import Prometheus

/// A booking's whole timeline, each event with its effect, in the forms support takes away:
/// a file for a ticket (`GET /api/bookings/{id}?format=ndjson|csv`) and the terminal
/// (`history --format text|ndjson|csv`). Both read it from here, over one replay of the
/// booking's stored events, so that the file and the page say the same.
struct BookingTimeline {
    enum Format: String, CaseIterable {
        case text, ndjson, csv

        /// The file's media type and name suffix when served.
        var mediaType: String {
            switch self {
            case .text: "text/plain; charset=utf-8"
            case .ndjson: "application/x-ndjson"
            case .csv: "text/csv; charset=utf-8; header=present"
            }
        }
    }

    let bookingID: String
    /// The booking's activities now, then those of other bookings its events name (the text
    /// form lists them).
    let records: [ActivityRecord]
    /// The booking's events up to the instant asked for, in `occurred_at` order.
    let rows: [StoredEventRow]
    let replay: HistoryReplay

    /// - Parameter context: as the JSON answer's replay has it, so that the file says what the page does.
    init(bookingID: String, history: BookingHistory, until: Double? = nil, context: HistoryReplay.Context) {
        self.bookingID = bookingID
        records = history.records
        rows = history.rows.filter { $0.effectiveTime <= until ?? .infinity }
        replay = HistoryReplay(history.replayed, until: until, skipping: history.notReplayed, context: context)
    }

    /// The attachment's name: `booking-<id>.<format>`, the id cut to ASCII letters, digits,
    /// `-` and `_` (a header carries no quote or line break a client chose).
    static func fileName(_ bookingID: String, _ format: Format) -> String {
        let safe = bookingID.unicodeScalars.prefix(100).map { scalar -> Character in
            let c = Character(scalar)
            return c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_") ? c : "_"
        }
        return "booking-" + String(safe) + "." + format.rawValue
    }

    func render(_ format: Format, now: Double) -> String {
        switch format {
        case .text: text(now: now)
        case .ndjson: ndjson()
        case .csv: csv()
        }
    }

    /// One read-API event document per line: the fields as ingested, `received_at`, `effect`
    /// (with its words) and `lock_screen`.
    func ndjson() -> String {
        var out = ""
        for row in rows { out += replay.document(row).text + "\n" }
        return out
    }

    static let csvColumns = [
        "occurred_at", "received_at", "activity_id", "type", "event", "status", "reason", "priority",
        "latency_ms", "token_fingerprint", "timestamp", "result", "why", "warnings", "effect", "content_state",
    ]

    /// RFC 4180: a header row, then one row per event; every field as ingested is taken from the
    /// event's stored document, the effect from the replay.
    func csv() -> String {
        var out = Self.csvColumns.joined(separator: ",") + "\r\n"
        for row in rows {
            let document = (try? JSONParser.parse(row.document)).flatMap { value -> JSONObject? in
                if case .object(let o) = value { return o } else { return nil }
            } ?? JSONObject()
            let note = replay.notes[row.seq]
            var cells: [String] = []
            for column in Self.csvColumns {
                switch column {
                case "result": cells.append(note?.effect.result.rawValue ?? "")
                case "why": cells.append(note?.effect.why?.rawValue ?? "")
                case "warnings": cells.append(note?.effect.warnings.map(\.name).joined(separator: " ") ?? "")
                case "effect": cells.append(note?.sentence ?? "not replayed: the activity's start is no longer stored")
                default: cells.append(Self.cell(document[column]))
                }
            }
            out += cells.map(Self.quoted).joined(separator: ",") + "\r\n"
        }
        return out
    }

    /// A JSON member as a cell: strings as they are (guarded against spreadsheet formulas),
    /// numbers as written, objects as compact JSON.
    static func cell(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: return ""
        case .string(let s)?: return formulaSafe(s)
        case .number(let n)?: return n.literal
        case .bool(let b)?: return b ? "true" : "false"
        case let other?: return formulaSafe(other.jsonString)
        }
    }

    /// A client's text that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, or a tab or
    /// carriage return first) is prefixed with an apostrophe, which spreadsheets show as text.
    static func formulaSafe(_ text: String) -> String {
        guard let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return text }
        return "'" + text
    }

    /// A cell quoted when it holds a comma, a quote or a line break; quotes doubled.
    static func quoted(_ cell: String) -> String {
        guard cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return cell }
        return "\"" + cell.replacing("\"", with: "\"\"") + "\""
    }

    /// The terminal form: the activities now, then one line per event with its effect in words.
    func text(now: Double) -> String {
        var out = Self.printable("Booking \(bookingID)") + "\n\nActivities:\n"
        var lines: [String] = []
        for r in records {
            var line = "  \(r.activityID)  \(r.attributesType)  \(r.state(at: now).rawValue)"
            if !ExactText.equal(r.bookingID, bookingID) { line += "  (booking \(r.bookingID ?? "none"))" }
            line += "  started \(RFC3339.format(r.startedAt))"
            if let ended = r.endedAt { line += ", ended \(RFC3339.format(ended)) by \(r.endedBy?.rawValue ?? "?")" }
            if let fp = r.tokenFingerprint { line += ", token \(fp)\(r.tokenInvalidated ? " (invalidated)" : "")" }
            lines.append(Self.printable(line))
        }
        out += (lines.isEmpty ? ["  (none started)"] : lines).joined(separator: "\n") + "\n\nTimeline:\n"
        for row in rows {
            guard case .object(let e)? = try? JSONParser.parse(row.document) else { continue }
            let effect = replay.notes[row.seq]?.sentence ?? "not replayed"
            out += Self.printable(Self.describe(e) + "  → " + effect) + "\n"
        }
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

    static func padded(_ text: String, to width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// One event's line: time, type, the push answer, the content.
    static func describe(_ e: JSONObject) -> String {
        func s(_ key: String) -> String? {
            switch e[key] {
            case .string(let v)?: v
            case .number(let n)?: n.literal
            default: nil
            }
        }
        var parts = [s("occurred_at") ?? "?", padded(s("type") ?? "?", to: 22),
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
