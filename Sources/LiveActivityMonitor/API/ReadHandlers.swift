import HTTPServer
import JSON
import LiveActivityWire
import Prometheus

/// `/api/activities`, `/api/activities/{id}` and `/api/bookings/{id}` (DESIGN.md section 6).
///
/// An activity's or a booking's events carry their effects, and `?at=` answers the activities
/// as they were at an instant: both from a `HistoryReplay` of the stored events through the
/// writer's own engine, on the reading thread (one booking's events, never the writer's lock).
struct ReadHandlers: Sendable {
    let store: any MonitorStore
    /// `--priority10-budget`, stated in the list and booking responses so that the dashboard
    /// draws priority-10 pushes against the budget `/metrics` counts with.
    let priority10Budget: Int
    /// Bounds the memory of history reads (`historyRead`).
    let historyReads = ConcurrencyLimit.historyReads()

    static let pageLimit = PageLimit(defaultValue: 100, most: 1000)

    /// The list query, parsed and checked.
    struct ListQuery {
        var state: ActivityState?
        var attributesType: String?
        var search: String?
        var limit: Int
        var after: Cursor?

        init(_ query: [String: String]) throws(APIError) {
            if let s = query["state"], !s.isEmpty {
                guard let parsed = ActivityState(rawValue: s) else {
                    throw .badRequest("state must be one of active, stale, ended, dismissed, pending")
                }
                state = parsed
            }
            attributesType = query["attributes_type"].flatMap { $0.isEmpty ? nil : $0 }
            let typed = query["q"].flatMap { $0.isEmpty ? nil : $0 }
            if let typed, typed.utf8.count > EventValidator.maxIDLength {
                // No id is longer: such a search could only cost a pass over every record. (Counted
                // as typed: lower case can be longer, `İ` two bytes becomes three.)
                throw .badRequest("q must be at most \(EventValidator.maxIDLength) bytes (the longest id)")
            }
            search = typed?.lowercased()
            limit = try ReadHandlers.pageLimit.parse(query)
            if let c = query["cursor"], !c.isEmpty {
                guard let cursor = Cursor(c) else { throw .badRequest("cursor is not one this server gave") }
                after = cursor
            }
        }

        /// The type filter and the search (`IDSearchIndex.matches`: a prefix of the activity id or
        /// the booking id, any case). The live list searches through the index instead.
        func matches(_ r: ActivityRecord) -> Bool {
            if let attributesType, r.attributesType != attributesType { return false }
            if let search, !IDSearchIndex.matches(r.activityID, search),
               !(r.bookingID.map { IDSearchIndex.matches($0, search) } ?? false) { return false }
            return true
        }

        /// Counts the live record at `i` by its state at `now`, and whether it belongs on the page
        /// (the state filter, after the cursor).
        func admits(_ i: Int, in records: UnsafeBufferPointer<ActivityRecord>, now: Double, counts: inout SIMD4<Int>) -> Bool {
            let state = records[i].state(at: now)
            switch state {
            case .active: counts[0] += 1
            case .stale: counts[1] += 1
            case .ended: counts[2] += 1
            case .pending: counts[3] += 1
            default: return false
            }
            if let wanted = self.state, wanted != state { return false }
            if let after, !after.precedes(records[i]) { return false }
            return true
        }
    }

    /// Where a page ended, in phone order: relevance, start time, id.
    struct Cursor {
        var key: PhoneOrderKey

        init(_ r: ActivityRecord) {
            key = PhoneOrderKey(r)
        }

        init?(_ text: String) {
            let parts = text.split(separator: "~", maxSplits: 2, omittingEmptySubsequences: false)
            // Only what `text` writes: finite numbers (Double() also reads "nan" and "inf") and an id.
            guard parts.count == 3, let r = Double(parts[0]), let s = Double(parts[1]), r.isFinite, s.isFinite,
                  !parts[2].isEmpty, parts[2].utf8.count <= EventValidator.maxIDLength,
                  !IdentifierText.hasControlCharacter(String(parts[2]))
            else { return nil }
            key = PhoneOrderKey(relevance: r, startedAt: s, activityID: CompactID(String(parts[2])))
        }

        var text: String { "\(key.relevance)~\(key.startedAt)~\(key.activityID.string)" }

        /// Whether `r` comes after this cursor in phone order.
        func precedes(_ r: ActivityRecord) -> Bool {
            PhoneOrderKey.ordered(key, PhoneOrderKey(r))
        }

        func precedes(_ k: PageKey) -> Bool {
            PhoneOrderKey.ordered(key, k.order)
        }
    }

    /// `busy`: over HTTP, lists run on a few threads of their own (`Router.listThreads`), and
    /// none was free in time for this one.
    func list(_ request: HTTPRequest, busy: Bool = false) throws(APIError) -> HTTPResponse {
        let query = try ListQuery(request.query)
        guard !busy else { throw .unavailable("too many activity lists and searches at once: retry shortly") }
        return try listNow(query)
    }

    /// A search reads the state lock for at most this many index entries at a time.
    static let searchSlice = 32

    private func listNow(_ query: ListQuery) throws(APIError) -> HTTPResponse {
        let now = store.clock.now()
        var counts = SIMD4<Int>(repeating: 0)
        var page: [ActivityRecord]
        if let search = query.search {
            page = searched(search, query, now: now, counts: &counts)
        } else {
            // From the kept order: the page and the counts cost the page, not the fleet.
            (page, counts) = NormalPriority.run {
                store.withLiveState { s in
                    s.records.livePage(at: now, state: query.state, type: query.attributesType, after: query.after?.key,
                                       limit: query.limit + 1)
                        ?? Self.walkedPage(query, in: s.records, now: now)
                }
            }
        }
        if query.state == .dismissed {
            // Dismissed activities are not kept in memory: they come from the database.
            do {
                page = try store.dismissedRecords(limit: query.limit + 1,
                                                  after: query.after.map { ($0.key.startedAt, $0.key.activityID.string) },
                                                  matching: query.matches)
            } catch { throw type(of: store).unavailable(error) }
        }
        let more = page.count > query.limit
        page = Array(page.prefix(query.limit))
        // Outside the state lock: the texts the live records left to their rows, one read.
        do { try store.fillTexts(&page) } catch { throw type(of: store).unavailable(error) }
        return .json { w in
            w.beginObject()
            w.key("activities")
            w.beginArray()
            for r in page { r.write(to: &w, now: now, priority10Budget: priority10Budget) }
            w.endArray()
            w.key("next_cursor"); w.string(more ? page.last.map { Cursor($0).text } : nil)
            w.key("counts")
            w.beginObject()
            w.key("active"); w.number(Int64(counts[0]))
            w.key("stale"); w.number(Int64(counts[1]))
            w.key("ended"); w.number(Int64(counts[2]))
            w.key("pending"); w.number(Int64(counts[3]))
            w.endObject()
            w.key("priority10_budget"); w.number(Int64(priority10Budget))
            w.endObject()
        }
    }

    /// The first `limit + 1` records of the live list and its counts, by one walk over every live
    /// record with a bounded heap (`FirstInOrder`): what `ActivityTable.livePage` answers
    /// from its kept order, and the fallback when it cannot (a clock set back before the table's
    /// `gaugeTime`; a table whose order is not kept). Records are read in place (indexing the
    /// buffer copies none) and only the page is copied out.
    static func walkedPage(_ query: ListQuery, in table: ActivityTable, now: Double)
        -> (records: [ActivityRecord], counts: SIMD4<Int>) {
        var counts = SIMD4<Int>(repeating: 0)
        let page = table.withRecords { records in
            var selection = FirstInOrder<Int>(limit: query.limit + 1) { ActivityRecord.phoneOrder(records[$0], records[$1]) }
            for i in records.indices where query.matches(records[i]) {
                guard query.admits(i, in: records, now: now, counts: &counts) else { continue }
                selection.offer(i)
            }
            return selection.sorted().map { records[$0] }
        }
        return (page, counts)
    }

    /// `?q=`: the matches, from the id index (`IDSearchIndex`), read in slices of `searchSlice`
    /// entries so that a search holds the state lock (which the writer and a scrape need) only
    /// for short spells, never for its whole length or for anything it can do without it:
    /// 1. under the lock, the next slice of index entries (a binary search, then the slice) and
    ///    each match's state and phone-order keys (`PageKey`: no record is copied); a booking
    ///    entry of an activity whose own id matches too is skipped (each is met once);
    /// 2. outside, the counts and the page's choice, over those keys;
    /// 3. once all slices are read, under the lock, a copy of the page's records (limit + 1).
    /// A search with fewer matches than a slice (the usual one) takes the lock once: its page is
    /// chosen and copied in that spell.
    /// Each spell sees the table as of its own instant: an activity that leaves meanwhile is left
    /// out of the page.
    private func searched(_ search: String, _ query: ListQuery, now: Double, counts: inout SIMD4<Int>) -> [ActivityRecord] {
        var selection = FirstInOrder<PageKey>(limit: query.limit + 1, ordered: PageKey.phoneOrder)
        var after: IDSearchIndex.Mark?
        var more = true
        var keys: [(key: PageKey, position: Int)] = []
        keys.reserveCapacity(Self.searchSlice)
        /// Counts a match and offers it to the page.
        func consider(_ key: PageKey) {
            switch key.state {
            case .active: counts[0] += 1
            case .stale: counts[1] += 1
            case .ended: counts[2] += 1
            case .pending: counts[3] += 1
            default: return
            }
            if let wanted = query.state, wanted != key.state { return }
            if let cursor = query.after, !cursor.precedes(key) { return }
            selection.offer(key)
        }
        while more {
            keys.removeAll(keepingCapacity: true)
            let first = after == nil
            let page: [ActivityRecord]? = NormalPriority.run { store.withLiveState { s in
                let entries = s.records.searchEntries(withPrefix: search, after: after, max: Self.searchSlice)
                after = entries.last.map(s.records.searchMark)
                more = entries.count == Self.searchSlice
                return s.records.withRecords { records in
                    for e in entries {
                        // Positions, read under the lock that took them.
                        let i = Int(e.position)
                        // Met by its own id's entry too.
                        if e.isBooking, IDSearchIndex.matches(records[i].activityID, search) { continue }
                        if let type = query.attributesType, records[i].attributesType != type { continue }
                        keys.append((PageKey(records[i], state: records[i].state(at: now)), i))
                    }
                    // Every match in this one slice (the usual search): the page, copied at once.
                    guard first, !more else { return nil }
                    for (key, _) in keys { consider(key) }
                    let chosen = Set(selection.sorted().map(\.activityID))
                    return keys.filter { chosen.contains($0.key.activityID) }
                        .sorted { PageKey.phoneOrder($0.key, $1.key) }.map { records[$0.position] }
                }
            } }
            if let page { return page }
            for (key, _) in keys { consider(key) }
        }
        let chosen = selection.sorted()
        return NormalPriority.run { store.withLiveState { s in chosen.compactMap { s.records[$0.activityID] } } }
    }

    func activity(_ id: String, query: [String: String] = [:]) throws(APIError) -> HTTPResponse {
        try historyRead { () throws(APIError) -> HTTPResponse in try activityNow(id, query: query) }
    }

    func booking(_ id: String, query: [String: String] = [:]) throws(APIError) -> HTTPResponse {
        guard let format = query["format"] else {
            return try historyRead { () throws(APIError) -> HTTPResponse in try bookingNow(id, query: query) }
        }
        guard let format = BookingTimeline.Format(rawValue: format), format != .text else {
            throw .badRequest("format must be ndjson or csv (or absent for the JSON answer)")
        }
        return try historyRead { () throws(APIError) -> HTTPResponse in try bookingFile(id, format, query: query) }
    }

    /// The booking's whole timeline (up to `?at=`) as a file for a support ticket.
    private func bookingFile(_ id: String, _ format: BookingTimeline.Format, query: [String: String]) throws(APIError) -> HTTPResponse {
        let at = Self.limit(try Self.instant(query)), now = store.clock.now()
        let history = try history(of: id)
        let timeline = BookingTimeline(bookingID: id, history: history, until: at,
                                       context: try replayContext(among: history.replayed, now: now))
        return HTTPResponse(status: 200, headers: [
            ("Content-Type", format.mediaType),
            ("Content-Disposition", "attachment; filename=\"\(BookingTimeline.fileName(id, format))\""),
        ], body: Array(timeline.render(format, now: now).utf8))
    }

    /// What a replay of `rows` judges with, as the writer does now.
    private func replayContext(among rows: [StoredEventRow], now: Double) throws(APIError) -> HistoryReplay.Context {
        let judged: Set<Int64>
        do { judged = try store.judgedSuperseded(among: rows) } catch { throw type(of: store).unavailable(error) }
        return HistoryReplay.Context(settings: store.settings, now: now, judged: judged, channels: store.withLiveState { $0.channels })
    }

    /// A history read, when one of the `historyReads` slots frees within a few seconds; 503 otherwise.
    private func historyRead(_ body: () throws(APIError) -> HTTPResponse) throws(APIError) -> HTTPResponse {
        guard let response = try historyReads.run(waitingAtMost: 5, body) else {
            throw .unavailable("too many history reads at once: retry shortly")
        }
        return response
    }

    private func activityNow(_ id: String, query: [String: String]) throws(APIError) -> HTTPResponse {
        let asked = try Self.instant(query), at = Self.limit(asked), paging = try EventPage(query)
        let now = store.clock.now()
        let record: ActivityRecord?, rows: [StoredEventRow]
        do {
            record = try store.record(id)
            rows = try store.storedEvents(activityID: id)
        } catch { throw type(of: store).unavailable(error) }
        guard let record else { throw .notFound("no activity \"\(id)\"") }
        let replayable = HistoryReplay.startIsStored(record, in: rows)
        let page = paging.select(rows, until: at)
        let replay = HistoryReplay(rows, until: at, skipping: replayable ? [] : [ExactString(id)],
                                   noting: Set(page.rows.map(\.seq)),
                                   context: try replayContext(among: rows, now: now))
        var w = JSONWriter()
        w.beginObject()
        if let at {
            guard replayable else {
                throw .notFound("activity \"\(id)\" cannot be replayed: its start is no longer stored (pruned)")
            }
            guard let past = replay.record(id) else {
                throw .notFound("activity \"\(id)\" had not started at \(RFC3339.text(asked ?? 0))")
            }
            past.writeMembers(to: &w, now: at, priority10Budget: priority10Budget)
        } else {
            record.writeMembers(to: &w, now: now, priority10Budget: priority10Budget)
        }
        w.key("transitions"); replay.writePassages(to: &w)
        EventPage.write(page, replay, to: &w)
        w.endObject()
        return .json(w.bytes)
    }

    private func bookingNow(_ id: String, query: [String: String]) throws(APIError) -> HTTPResponse {
        let asked = try Self.instant(query), at = Self.limit(asked), paging = try EventPage(query)
        let now = store.clock.now()
        let history = try history(of: id)
        let page = paging.select(history.rows, until: at)
        let replay = HistoryReplay(history.replayed, until: at, skipping: history.notReplayed, noting: Set(page.rows.map(\.seq)),
                                   context: try replayContext(among: history.replayed, now: now))
        var w = JSONWriter()
        w.beginObject()
        w.key("booking_id"); w.string(id)
        if let asked { w.key("at"); w.date(asked) }
        w.key("activities")
        w.beginArray()
        if let at {
            for r in replay.records(among: history.records) { r.write(to: &w, now: at, priority10Budget: priority10Budget) }
        } else {
            for r in history.records { r.write(to: &w, now: now, priority10Budget: priority10Budget) }
        }
        w.endArray()
        w.key("priority10_budget"); w.number(Int64(priority10Budget))
        // The booking's activities the replay cannot rebuild (at `at`: those started by then).
        w.key("not_replayed")
        w.beginArray()
        for r in history.records where history.notReplayed.contains(ExactString(r.activityID)) && r.startedAt <= at ?? .infinity {
            w.string(r.activityID)
        }
        w.endArray()
        w.key("transitions"); replay.writePassages(to: &w)
        EventPage.write(page, replay, to: &w)
        w.endObject()
        return .json(w.bytes)
    }

    /// `?at=`: an RFC 3339 instant, or nil when not given.
    static func instant(_ query: [String: String]) throws(APIError) -> Double? {
        guard let text = query["at"] else { return nil }
        // A query string's "+" arrives as a space: a space has no place in RFC 3339, so it was one.
        guard let at = RFC3339.parse(String(text.map { $0 == " " ? "+" : $0 })), at.isFinite else {
            throw .badRequest("at must be an RFC 3339 date-time such as 2026-11-29T14:32:00Z or "
                              + "2026-11-29T15:32:00.134+01:00, not \"\(text)\"")
        }
        return at
    }

    /// The replay's limit for `?at=`: the last moment of the instant's millisecond. The API writes
    /// times to the millisecond (rounded), so an event asked about at its `occurred_at` as written
    /// is included, and so is what it did.
    static func limit(_ at: Double?) -> Double? {
        at.map { (((($0 * 1000).rounded()) + 0.5) / 1000).nextDown }
    }

    /// A booking's activities and events as its answers replay them (`BookingHistory`); 404 when
    /// it has neither.
    private func history(of id: String) throws(APIError) -> BookingHistory {
        do {
            let records = try store.records(bookingID: id), rows = try store.storedEvents(bookingID: id)
            guard !records.isEmpty || !rows.isEmpty else { throw APIError.notFound("no booking \"\(id)\"") }
            return try BookingHistory(records: records, rows: rows, record: { try store.record($0) },
                                      events: { try store.storedEvents(activityID: $0) })
        } catch let error as APIError {
            throw error
        } catch { throw type(of: store).unavailable(error) }
    }

}
