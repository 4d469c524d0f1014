import JSON

/// One page of a history's events (`?limit=&cursor=` on `/api/activities/{id}` and
/// `/api/bookings/{id}`): in `occurred_at` order, ties in arrival order, after the cursor. A
/// booking can hold hundreds of thousands of events; an answer holds a page, and
/// `next_cursor` (null on the last page) leads on.
struct EventPage {
    static let pageLimit = PageLimit(defaultValue: 500, most: 5000)
    let limit: Int
    /// The last event of the previous page: its `occurred_at` and `seq`.
    let after: (occurredAt: Double, seq: Int64)?

    init(_ query: [String: String]) throws(APIError) {
        limit = try Self.pageLimit.parse(query)
        guard let text = query["cursor"], !text.isEmpty else {
            after = nil
            return
        }
        let parts = text.split(separator: "~", omittingEmptySubsequences: false)
        guard parts.count == 2, let at = Double(parts[0]), at.isFinite, let seq = Int64(parts[1]) else {
            throw .badRequest("cursor is not one this server gave")
        }
        after = (at, seq)
    }

    /// The page of `rows` (in `occurred_at`, `seq` order) among those that took effect by
    /// `until`, and whether more follow it.
    func select(_ rows: [StoredEventRow], until: Double?) -> (rows: [StoredEventRow], more: Bool) {
        var page: [StoredEventRow] = []
        for row in rows where row.effectiveTime <= until ?? .infinity {
            if let after, (row.occurredAt, row.seq) <= (after.occurredAt, after.seq) { continue }
            if page.count == limit { return (page, true) }
            page.append(row)
        }
        return (page, false)
    }

    /// Writes `events` (the page `select` chose, with what `replay` noted) and `next_cursor`.
    static func write(_ page: (rows: [StoredEventRow], more: Bool), _ replay: HistoryReplay, to w: inout JSONWriter) {
        w.key("events")
        w.beginArray()
        for row in page.rows { w.write(replay.document(row)) }
        w.endArray()
        w.key("next_cursor")
        w.string(page.more ? page.rows.last.map { "\($0.occurredAt)~\($0.seq)" } : nil)
    }
}
