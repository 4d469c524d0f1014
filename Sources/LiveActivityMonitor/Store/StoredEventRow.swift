import JSON
import LiveActivityWire

/// One row of the `events` table as the read API serves it and a replay reads it.
struct StoredEventRow: Sendable {
    /// Arrival order: the order in which the writer applied the events.
    var seq: Int64
    /// The event as stored (`EventValidator.storedBody`, perhaps with an inherited booking).
    var body: String
    /// The `now` of the commit that stored it.
    var receivedAt: Double
    var occurredAt: Double
    /// When it took effect: `occurredAt`, unless that is in the future of its receipt.
    var effectiveTime: Double { StateEngine.effectiveTime(occurredAt: occurredAt, receivedAt: receivedAt) }
    /// The client's `id`, and the `booking_id` the client gave (the column; the body may also
    /// carry an inherited one).
    var key: String?
    var bookingID: String?
    var activityID: String?
    /// The verdict the writer stored with it: why its content would not decode (`event_verdicts`).
    var verdict: String? = nil
    /// A broadcast's: what its subscribers of each attributes type could not decode, as the
    /// reads select it (`broadcast_verdicts`: a JSON array of `[type, detail]`; nil for none).
    var broadcastVerdicts: String? = nil

    /// The stored text with `received_at` spliced in before its closing brace: the read API's
    /// event before its effect.
    var document: String {
        var text = body
        text.removeLast()
        let comma = text.utf8.count > 1 ? "," : ""
        return text + comma + "\"received_at\":\"" + RFC3339.format(receivedAt) + "\"}"
    }

    /// The event as the writer applied it, or nil if its text no longer validates.
    var event: Event? {
        var event = EventValidator.stored(body: body, key: key, bookingID: bookingID, occurredAt: occurredAt)
        event?.contentVerdict = verdict
        event?.broadcastVerdicts = Self.broadcastVerdicts(broadcastVerdicts)
        return event
    }

    /// A broadcast's verdicts per attributes type from the text the reads select (a JSON array of
    /// `[type, detail]` pairs, built by the database, which escapes any text); none for nil.
    static func broadcastVerdicts(_ text: String?) -> [(attributesType: String, detail: String)] {
        guard let text, case .array(let pairs)? = try? JSONParser.parse(text) else { return [] }
        return pairs.compactMap { pair in
            guard case .array(let two) = pair, two.count == 2, case .string(let type) = two[0],
                  case .string(let detail) = two[1] else { return nil }
            return (type, detail)
        }
    }
}
