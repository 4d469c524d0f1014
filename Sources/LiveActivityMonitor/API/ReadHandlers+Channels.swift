import HTTPServer
import Prometheus
import JSON

/// `GET /api/channels` and `GET /api/channels/{channel_id}` (DESIGN.md section 6): the broadcast
/// channels the server knows, from the channel book and the live activities' subscriptions.
extension ReadHandlers {
    static let channelPageLimit = PageLimit(defaultValue: 100, most: 1000)
    /// A channel's answer lists at most this many subscribers (phone order) and events (newest).
    static let channelSubscribersShown = 100
    static let channelEventsShown = 50

    /// What the list and the detail say of one channel.
    private struct ChannelSummary {
        var id: String
        var channel: ChannelBook.Channel?
        var subscribers: Int

        /// `live` (created, not deleted), `deleted`, or `unreported`: known only from
        /// subscriptions or broadcasts (the backend does not report channel management).
        var state: String {
            guard let channel else { return "unreported" }
            if channel.deleted != nil { return "deleted" }
            return channel.created != nil ? "live" : "unreported"
        }

        func writeMembers(to w: inout JSONWriter) {
            w.key("channel_id"); w.string(id)
            w.key("state"); w.string(state)
            w.key("storage_policy"); w.number(channel?.storagePolicy)
            w.key("created_at"); w.date(channel?.created?.at)
            w.key("deleted_at"); w.date(channel?.deleted?.at)
            w.key("subscribers"); w.number(subscribers)
            w.key("last_broadcast")
            guard let b = channel?.lastBroadcast else { return w.null() }
            w.beginObject()
            w.key("at"); w.date(b.at)
            w.key("event"); w.string(b.push.kind.rawValue)
            w.key("status"); w.number(b.push.status)
            w.key("reason"); w.string(b.push.reason)
            w.key("priority"); w.number(b.push.priority)
            w.key("latency_ms"); w.number(b.push.latencyMs)
            w.key("result"); w.string(b.effect.rawValue)
            w.key("why"); w.string(b.why?.rawValue)
            w.endObject()
        }
    }

    /// Every channel the book knows or a live activity is subscribed to, in byte order of the id,
    /// a page at a time (`limit`, `cursor`: the last id of the previous page).
    func channels(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let query = request.query
        let limit = try Self.channelPageLimit.parse(query)
        let after = query["cursor"].flatMap { $0.isEmpty ? nil : $0 }
        let now = store.clock.now()
        // The book as it is (shared, not copied) and the subscribed channels' ids: the sort and the
        // counts run outside the state's lock, which the book's deleted channels would make long.
        let (book, subscribedChannels) = store.withLiveState { s in (s.channels, Array(s.records.subscribedChannels)) }
        var ids = Set(book.channels.keys)
        ids.formUnion(subscribedChannels)
        let sorted = ids.filter { id in after.map { ExactText.precedes($0, id.text) } ?? true }.sorted().map(\.text)
        let more = sorted.count > limit
        let live = book.liveByPolicy.values.reduce(0, +)
        let deleted = book.channels.values.filter { $0.deleted != nil }.count
        let page = sorted.prefix(limit).map { id in
            ChannelSummary(id: id, channel: book[id], subscribers: subscribers(of: id, at: now, first: 0).count)
        }
        return .json { w in
            w.beginObject()
            w.key("channels")
            w.beginArray()
            for summary in page {
                w.beginObject()
                summary.writeMembers(to: &w)
                w.endObject()
            }
            w.endArray()
            w.key("next_cursor"); w.string(more ? page.last?.id : nil)
            w.key("counts")
            w.beginObject()
            w.key("live"); w.number(live)
            w.key("deleted"); w.number(deleted)
            w.endObject()
            w.key("limit"); w.number(ChannelBook.limit)
            w.endObject()
        }
    }

    /// One channel: what the list says, its subscribers (phone order; their lock screens show
    /// what its broadcasts brought) and its newest events with their effects.
    func channel(_ id: String) throws(APIError) -> HTTPResponse {
        let now = store.clock.now()
        let (count, first) = subscribers(of: id, at: now, first: Self.channelSubscribersShown)
        var (summary, subscribers, book) = store.withLiveState { s in
            (ChannelSummary(id: id, channel: s.channels[id], subscribers: count),
             first.compactMap { s.records[$0.activityID] }, s.channels)
        }
        let rows: [StoredEventRow]
        do {
            rows = try store.storedEvents(channelID: id, limit: Self.channelEventsShown)
            try store.fillTexts(&subscribers)
        } catch {
            throw type(of: store).unavailable(error)
        }
        guard summary.channel != nil || summary.subscribers > 0 || !rows.isEmpty else {
            throw .notFound("no channel \"\(id)\"")
        }
        // Each event's own effect, judged by the book as the writer judged it.
        let replay = HistoryReplay(rows, context: .init(settings: store.settings, now: now, judged: [], channels: book))
        return .json { w in
            w.beginObject()
            summary.writeMembers(to: &w)
            w.key("activities")
            w.beginArray()
            for r in subscribers { r.write(to: &w, now: now, priority10Budget: priority10Budget) }
            w.endArray()
            w.key("events")
            w.beginArray()
            for row in rows { w.write(replay.document(row)) }
            w.endArray()
            w.key("priority10_budget"); w.number(Int64(priority10Budget))
            w.endObject()
        }
    }

    /// Subscriber ids the state's lock is held for at a time: a few milliseconds.
    static let subscribersPerLock = 4096

    /// `channel`'s subscribers at `now`: how many, and the first `limit` in phone order. Their ids
    /// are read a chunk at a time, the state's lock taken for each, so that a channel a million
    /// phones subscribe to never holds a commit or a scrape for its whole pass (about half a
    /// microsecond an id). A record that changes meanwhile is read as it is when its chunk is.
    private func subscribers(of channel: String, at now: Double, first limit: Int) -> (count: Int, first: [PhoneOrderKey]) {
        let ids = Array(store.withLiveState { $0.records.subscriberIDs(of: channel) })
        var count = 0
        var selection = FirstInOrder<PhoneOrderKey>(limit: limit, ordered: PhoneOrderKey.ordered)
        for start in stride(from: 0, to: ids.count, by: Self.subscribersPerLock) {
            let chunk = ids[start..<min(start + Self.subscribersPerLock, ids.count)]
            store.withLiveState { s in s.records.tally(chunk, subscribedTo: channel, at: now, count: &count, into: &selection) }
        }
        return (count, selection.sorted())
    }
}
