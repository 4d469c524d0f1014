import Foundation
import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// Issue 21, item 6: support takes a booking's timeline away as a file, each event with its
/// effect in words — from the API (`?format=ndjson|csv`) and from `history --format`.
@Suite struct BookingExportTests {
    /// RFC 4180 rows, parsed independently of the server's writer (quotes, doubled quotes, CRLF).
    static func csvRows(_ text: String) -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], cell = "", quoted = false
        var chars = Array(text)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" { cell.append("\""); chars.removeFirst() } else { quoted = false }
                } else { cell.append(c) }
            } else if c == "\"" { quoted = true }
            else if c == "," { row.append(cell); cell = "" }
            else if c == "\r\n" || c == "\n" { row.append(cell); rows.append(row); row = []; cell = "" }
            else { cell.append(c) }
        }
        return rows
    }

    /// The effect words of each event of the JSON answer, in order.
    static func effectTexts(_ answer: JSONValue) -> [String] {
        HistoryPagingTests.events(answer).map { $0["effect"]?["text"]?.stringValue ?? "" }
    }

    @Test func aBookingDownloadsAsCSVAndNDJSONWithTheEffectsThePageShows() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: Scenario.events).status == 200)
        let answer = try server.json("/api/bookings/BK-1042")
        let words = Self.effectTexts(answer)
        #expect(words.contains("not delivered: APNs answered 429 TooManyRequests"), "\(words)")
        #expect(words.contains("dropped: not newer than the content shown"))
        #expect(words.contains("no effect: sent to a token that a newer one replaced"))
        #expect(words.contains("no effect: the activity had already ended"))

        let csv = try server.get("/api/bookings/BK-1042?format=csv")
        #expect(csv.status == 200)
        #expect(csv.headers["content-type"]?.hasPrefix("text/csv") == true)
        #expect(csv.headers["content-disposition"] == "attachment; filename=\"booking-BK-1042.csv\"")
        let rows = Self.csvRows(csv.text)
        #expect(rows.first == BookingTimeline.csvColumns)
        #expect(rows.count == words.count + 1, "a header, then one row per event")
        let effect = try #require(rows.first?.firstIndex(of: "effect"))
        #expect(rows.dropFirst().map { $0[effect] } == words, "the file says what the page says")
        #expect(!csv.text.contains(Scenario.tokenA), "no raw token in a file")

        let ndjson = try server.get("/api/bookings/BK-1042?format=ndjson")
        #expect(ndjson.status == 200)
        #expect(ndjson.headers["content-type"] == "application/x-ndjson")
        #expect(ndjson.headers["content-disposition"] == "attachment; filename=\"booking-BK-1042.ndjson\"")
        let lines = try ndjson.text.split(separator: "\n").map { try JSONParser.parse(String($0)) }
        #expect(lines == HistoryPagingTests.events(answer), "each line is the read API's event, effect included")

        // An instant: the file holds what had happened by then.
        let early = try server.get("/api/bookings/BK-1042?format=csv&at=" + RFC3339.format(Scenario.t0 + 150))
        #expect(Self.csvRows(early.text).count == 1 + 3, "the start and two pushes")

        for bad in ["xml", "text", ""] {
            #expect(try server.get("/api/bookings/BK-1042?format=" + bad).status == 400, "format=\(bad)")
        }
        #expect(try server.get("/api/bookings/BK-nope?format=csv").status == 404)
    }

    @Test func aClientsTextCannotBecomeAFormulaOrAFileName() throws {
        let server = try TestServer()
        defer { server.stop() }
        // Control characters are refused at ingest; quotes, commas and other letters are not.
        let booking = "=HYPERLINK(\"http://x\",\"y\") é"
        let start = JSONValue(["type": "activity.started", "activity_id": "-2+3", "booking_id": "@" + booking,
                               "attributes_type": "TimerWidgetAttributes", "occurred_at": TestServer.base - 60,
                               "content_state": [:] as [String: Any]] as [String: Any])
        #expect(try server.post(events: [start]).status == 200)
        let path = "/api/bookings/" + ("@" + booking).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let csv = try server.get(path + "?format=csv")
        #expect(csv.status == 200)
        #expect(csv.headers["content-disposition"] == "attachment; filename=\"booking-__HYPERLINK__http___x___y____.csv\"")
        let rows = Self.csvRows(csv.text)
        let id = try #require(rows.first?.firstIndex(of: "activity_id"))
        #expect(rows[1][id] == "'-2+3", "a leading minus is shown as text, not computed")
    }

    @Test func historyWritesEachFormatFromTheFile() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try TestServer(directory: dir)
        #expect(try server.post(events: Scenario.events).status == 200)
        let words = Self.effectTexts(try server.json("/api/bookings/BK-1042"))
        let apiCSV = try server.get("/api/bookings/BK-1042?format=csv").text
        server.stop(keepFiles: true)
        let db = dir + "/monitor.sqlite"

        let text = try CommandLineTests.run(["history", "BK-1042", "--db", db])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("update → 429 TooManyRequests, 42.5 ms, priority 10"))
        #expect(text.stdout.contains("→ not delivered: APNs answered 429 TooManyRequests"))
        let csv = try CommandLineTests.run(["history", "--format", "csv", "BK-1042", "--db", db])
        #expect(csv.status == 0)
        #expect(csv.stdout == apiCSV, "the terminal's file is the API's")
        let ndjson = try CommandLineTests.run(["history", "--format=ndjson", "BK-1042", "--db", db])
        let lines = try ndjson.stdout.split(separator: "\n").map { try JSONParser.parse(String($0)) }
        #expect(lines.map { $0["effect"]?["text"]?.stringValue ?? "" } == words)
        let bad = try CommandLineTests.run(["history", "--format", "xml", "BK-1042", "--db", db])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--format must be text, ndjson or csv"))
    }

    /// The files and `history` judge as the page does: with the server's rule settings, its now,
    /// the start pushes it judged superseded and its channels. Before, they replayed with the
    /// defaults and now at infinity: a start push still in its window read `not_started` in the
    /// file and `waiting` on the page, and a push a shorter delivery grace made `missed` read null.
    @Test func theFilesAndHistoryJudgeWithTheServersSettings() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let now = Date().timeIntervalSince1970
        let server = try TestServer(now: now, directory: dir) { c in
            c.engine.startWindow = 600
            c.engine.deliveryGrace = 5
        }
        let token = String(repeating: "ac", count: 32)
        let content = { (p: Double) -> JSONValue in ["driverName": "Ana", "rating": "4.9", "progress": .number(JSONNumber(p)), "duration": 3] }
        let events: [JSONValue] = [
            ["id": "x-p2s", "type": "push.sent", "event": "start", "booking_id": "BK-X", "attributes_type": "LiveActivityAttributes",
             "attributes": [:], "content_state": content(0), "push_to_start_token": .string(String(repeating: "cd", count: 32)),
             "status": 200, "latency_ms": 9, "alert": ["title": "a", "body": "b"], "occurred_at": .number(JSONNumber(now - 5))],
            ["id": "x-s", "type": "activity.started", "activity_id": "X1", "booking_id": "BK-X", "attributes_type": "LiveActivityAttributes",
             "occurred_at": .number(JSONNumber(now - 60)), "content_state": content(0.1), "push_token": .string(token)],
            ["id": "x-u", "type": "push.sent", "event": "update", "activity_id": "X1", "occurred_at": .number(JSONNumber(now - 30)),
             "timestamp": .number(JSONNumber(now - 30)), "status": 200, "latency_ms": 5, "push_token": .string(token), "content_state": content(0.5)],
            ["id": "x-o", "type": "activity.observed", "activity_id": "X1", "occurred_at": .number(JSONNumber(now - 20)), "content_state": content(0.1)],
        ]
        #expect(try server.post(events: events).status == 200)
        let page = HistoryPagingTests.events(try server.json("/api/bookings/BK-X"))
        let verdicts = { (events: [JSONValue]) in events.map { "\($0["id"]!.stringValue!): \($0["effect"]?["start"] ?? .null) \($0["effect"]?["delivery"] ?? .null)" } }
        #expect(verdicts(page).contains("x-p2s: \"waiting\" null"), "\(verdicts(page))")
        #expect(verdicts(page).contains("x-u: null \"missed\""), "\(verdicts(page))")
        let file = try server.get("/api/bookings/BK-X?format=ndjson").text.split(separator: "\n").map { try JSONParser.parse(String($0)) }
        #expect(verdicts(file) == verdicts(page), "the file says what the page says")
        server.stop(keepFiles: true)
        let run = try CommandLineTests.run(["history", "--format", "ndjson", "--start-window", "10m", "--delivery-grace", "5s",
                                            "BK-X", "--db", dir + "/monitor.sqlite"])
        #expect(run.status == 0, "\(run.stderr)")
        let printed = try run.stdout.split(separator: "\n").map { try JSONParser.parse(String($0)) }
        #expect(verdicts(printed) == verdicts(page), "history says what the page says, given the server's settings")
    }
}
