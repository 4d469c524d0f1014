import Foundation

extension LiveActivityEvent {
    /// The `push.sent` event for one APNs request: what was sent (the payload, its `aps.event`,
    /// `timestamp`, `content-state`, dates, relevance, alert, push-to-start attributes) and what
    /// APNs answered.
    ///
    /// - Parameters:
    ///   - apnsPayload: the request body exactly as sent to APNs.
    ///   - pushToken: the token in the request path (`/3/device/<token>`).
    ///   - priority: the `apns-priority` header sent (10 when absent).
    ///   - status: the HTTP status APNs answered; 0 when no answer came.
    ///   - reason: the `reason` of APNs' error body (see `apnsReason(fromResponseBody:)`).
    ///   - apnsID: the `apns-id` response header.
    ///   - apnsUniqueID: the `apns-unique-id` response header (development environment).
    ///   - latencyMs: from sending the request to the answer (or to giving up).
    ///   - activityID: the activity the token belongs to; nil only for push-to-start.
    ///   - bookingID: required for push-to-start; otherwise inherited from the activity.
    ///   - occurredAt: when the request was sent.
    ///   - id: the idempotency key; random by default. Pass your own when the same request may
    ///     be reported twice (e.g. replayed from a log), so that it is counted once.
    /// - Throws: `APNsPayloadError` for a payload the monitor could not take: not a JSON object,
    ///   no `aps`, no valid `aps.event`, a field of the wrong type, or a push-to-start without
    ///   `bookingID`.
    public static func pushSent(apnsPayload: Data, pushToken: PushToken, priority: PushSent.Priority? = nil,
                                status: Int, reason: String? = nil, apnsID: String? = nil,
                                apnsUniqueID: String? = nil, latencyMs: Double, activityID: String?,
                                bookingID: String? = nil, occurredAt: Date = Date(), app: String? = nil,
                                id: String? = nil) throws(APNsPayloadError) -> LiveActivityEvent {
        let payload = try decode(apnsPayload)
        guard let aps = payload.aps else { throw .missingAPS }
        guard let name = aps.event, let event = PushSent.Event(rawValue: name) else { throw .badEvent(aps.event) }
        if event == .start, bookingID?.isEmpty ?? true { throw .missingBookingID }
        let fields = PushSent(
            event: event, status: status, latencyMs: latencyMs, pushToken: pushToken, priority: priority,
            reason: reason, apnsID: apnsID, apnsUniqueID: apnsUniqueID, payloadBytes: apnsPayload.count,
            timestamp: aps.timestamp.map(Date.init(timeIntervalSince1970:)), contentState: aps.contentState,
            staleDate: aps.staleDate.map(Date.init(timeIntervalSince1970:)),
            dismissalDate: aps.dismissalDate.map(Date.init(timeIntervalSince1970:)),
            relevanceScore: aps.relevanceScore, alert: Self.alert(aps.alert), attributes: aps.attributes)
        return .pushSent(activityID: activityID, fields, bookingID: bookingID, attributesType: aps.attributesType,
                         occurredAt: occurredAt, app: app, id: id)
    }

    /// The payload, or the error naming what is wrong with it: a field of the wrong type is
    /// named as such, not as "not JSON".
    private static func decode(_ data: Data) throws(APNsPayloadError) -> APNsPayload {
        do {
            return try JSONDecoder().decode(APNsPayload.self, from: data)
        } catch DecodingError.typeMismatch(let type, let context) where !context.codingPath.isEmpty {
            throw .badField(context.codingPath.map(\.stringValue).joined(separator: "."), expected: expected(type))
        } catch DecodingError.valueNotFound(let type, let context) where !context.codingPath.isEmpty {
            throw .badField(context.codingPath.map(\.stringValue).joined(separator: "."), expected: expected(type))
        } catch {
            throw .notJSON(String(describing: error))
        }
    }

    private static func expected(_ type: Any.Type) -> String {
        if type == Double.self { return "a number" }
        if type == String.self { return "a string" }
        return "an object"
    }

    /// The `reason` of an APNs error body such as `{"reason":"BadDeviceToken"}`, or nil.
    public static func apnsReason(fromResponseBody body: Data) -> String? {
        guard let value = try? JSONDecoder().decode(JSONContent.self, from: body) else { return nil }
        return value.objectValue?["reason"]?.stringValue
    }

    /// A Live Activity alert keeps only plain-string titles and bodies; a localized one
    /// (`{"loc-key": …}`) has no text the monitor could show.
    private static func alert(_ value: JSONContent?) -> ActivityAlert? {
        guard let object = value?.objectValue else { return nil }
        let alert = ActivityAlert(title: object["title"]?.stringValue, body: object["body"]?.stringValue)
        return alert.title == nil && alert.body == nil ? nil : alert
    }
}
