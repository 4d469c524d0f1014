import HTTPServer
import JSON

/// `/api/activities`, `/api/activities/{id}` and `/api/bookings/{id}` (DESIGN.md section 6).
struct ReadHandlers: Sendable {
    let store: EventStore
    /// `--priority10-budget`, stated in the list and booking responses so that the dashboard
    /// draws priority-10 pushes against the budget `/metrics` counts with.
    let priority10Budget: Int

    static let defaultLimit = 100
    static let maxLimit = 1000

    /// The list query, parsed and checked.
    struct ListQuery {
        var state: ActivityState?
        var attributesType: String?
        var search: String?
        var limit = ReadHandlers.defaultLimit
        var after: Cursor?

        init(_ query: [String: String]) throws(APIError) {
            if let s = query["state"], !s.isEmpty {
                guard let parsed = ActivityState(rawValue: s), parsed != .pending else {
                    throw .badRequest("state must be one of active, stale, ended, dismissed")
                }
                state = parsed
            }
            attributesType = query["attributes_type"].flatMap { $0.isEmpty ? nil : $0 }
            search = query["q"].flatMap { $0.isEmpty ? nil : $0.lowercased() }
            if let search, search.utf8.count > EventValidator.maxIDLength {
                // No id is longer: such a search could only cost a pass over every record.
                throw .badRequest("q must be at most \(EventValidator.maxIDLength) bytes (the longest id)")
            }
            if let l = query["limit"] {
                guard let n = Int(l), (1...ReadHandlers.maxLimit).contains(n) else {
                    throw .badRequest("limit must be an integer from 1 to \(ReadHandlers.maxLimit)")
                }
                limit = n
            }
            if let c = query["cursor"], !c.isEmpty {
                guard let cursor = Cursor(c) else { throw .badRequest("cursor is not one this server gave") }
                after = cursor
            }
        }

        func matches(_ r: ActivityRecord) -> Bool {
            if let attributesType, r.attributesType != attributesType { return false }
            if let search, !r.activityID.lowercased().contains(search),
               !(r.bookingID?.lowercased().contains(search) ?? false) { return false }
            return true
        }
    }

    /// Where a page ended, in phone order: relevance, start time, id.
    struct Cursor {
        var relevance: Double
        var startedAt: Double
        var activityID: String

        init(_ r: ActivityRecord) {
            relevance = r.relevanceScore ?? 0
            startedAt = r.startedAt
            activityID = r.activityID
        }

        init?(_ text: String) {
            let parts = text.split(separator: "~", maxSplits: 2, omittingEmptySubsequences: false)
            // Only what `text` writes: finite numbers (Double() also reads "nan" and "inf") and an id.
            guard parts.count == 3, let r = Double(parts[0]), let s = Double(parts[1]), r.isFinite, s.isFinite,
                  !parts[2].isEmpty, parts[2].utf8.count <= EventValidator.maxIDLength,
                  !IdentifierText.hasControlCharacter(String(parts[2]))
            else { return nil }
            relevance = r; startedAt = s; activityID = String(parts[2])
        }

        var text: String { "\(relevance)~\(startedAt)~\(activityID)" }

        /// Whether `r` comes after this cursor in phone order.
        func precedes(_ r: ActivityRecord) -> Bool {
            let rr = r.relevanceScore ?? 0
            if rr != relevance { return rr < relevance }
            if r.startedAt != startedAt { return r.startedAt < startedAt }
            return r.activityID > activityID
        }
    }

    func list(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let query = try ListQuery(request.query)
        let now = store.clock.now()
        var counts = [0, 0, 0]
        // Records are read in place (indexing the buffer copies none) and only the page is copied out.
        var page = store.withState { s in
            s.records.withRecords { records in
                var selection = PhoneOrderSelection(limit: query.limit + 1)
                for i in records.indices where query.matches(records[i]) {
                    let state = records[i].state(at: now)
                    switch state {
                    case .active: counts[0] += 1
                    case .stale: counts[1] += 1
                    case .ended: counts[2] += 1
                    default: continue
                    }
                    if let wanted = query.state, wanted != state { continue }
                    if let after = query.after, !after.precedes(records[i]) { continue }
                    selection.offer(i, in: records)
                }
                return selection.sorted(in: records).map { records[$0] }
            }
        }
        if query.state == .dismissed {
            // Dismissed activities are not kept in memory: they come from the database.
            do {
                page = try store.dismissedRecords(limit: query.limit + 1,
                                                  after: query.after.map { ($0.startedAt, $0.activityID) },
                                                  matching: query.matches)
            } catch { throw EventStore.unavailable(error) }
        }
        let more = page.count > query.limit
        page = Array(page.prefix(query.limit))
        return .json { w in
            w.beginObject()
            w.key("activities")
            w.beginArray()
            for r in page { r.write(to: &w, now: now) }
            w.endArray()
            w.key("next_cursor"); w.string(more ? page.last.map { Cursor($0).text } : nil)
            w.key("counts")
            w.beginObject()
            w.key("active"); w.number(Int64(counts[0]))
            w.key("stale"); w.number(Int64(counts[1]))
            w.key("ended"); w.number(Int64(counts[2]))
            w.endObject()
            w.key("priority10_budget"); w.number(Int64(priority10Budget))
            w.endObject()
        }
    }

    func activity(_ id: String) throws(APIError) -> HTTPResponse {
        let now = store.clock.now()
        let record: ActivityRecord?, events: [String]
        do {
            record = try store.record(id)
            events = try store.eventDocuments(activityID: id)
        } catch { throw EventStore.unavailable(error) }
        guard let record else { throw .notFound("no activity \"\(id)\"") }
        var w = JSONWriter()
        record.write(to: &w, now: now)
        // Reopen the activity object to append its events.
        var bytes = w.bytes
        bytes.removeLast()
        bytes += Array(",\"events\":".utf8) + Self.array(events) + [UInt8(ascii: "}")]
        return .json(bytes)
    }

    func booking(_ id: String) throws(APIError) -> HTTPResponse {
        let now = store.clock.now()
        let records: [ActivityRecord], events: [String]
        do {
            records = try store.records(bookingID: id)
            events = try store.eventDocuments(bookingID: id)
        } catch { throw EventStore.unavailable(error) }
        guard !records.isEmpty || !events.isEmpty else { throw .notFound("no booking \"\(id)\"") }
        var w = JSONWriter()
        w.beginObject()
        w.key("booking_id"); w.string(id)
        w.key("activities")
        w.beginArray()
        for r in records { r.write(to: &w, now: now) }
        w.endArray()
        w.key("priority10_budget"); w.number(Int64(priority10Budget))
        w.endObject()
        var bytes = w.bytes
        bytes.removeLast()
        bytes += Array(",\"events\":".utf8) + Self.array(events) + [UInt8(ascii: "}")]
        return .json(bytes)
    }

    /// A JSON array of already-serialised objects.
    static func array(_ documents: [String]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (i, d) in documents.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += d.utf8
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}
