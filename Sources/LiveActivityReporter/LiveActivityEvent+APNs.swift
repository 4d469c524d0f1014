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
    ///   - id: the idempotency key; `LiveActivityEvent.newID()` (time-ordered) by default. Pass
    ///     your own when the same request may be reported twice (e.g. replayed from a log), so
    ///     that it is counted once.
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

    /// The `push.sent` event for one broadcast: a request to the broadcast endpoint
    /// (`POST /4/broadcasts/apps/<bundle>` with the `apns-channel-id` header), what it sent (as
    /// for a push to a token: `aps.event`, `timestamp`, `content-state`, dates, relevance, alert)
    /// and what APNs answered. A broadcast has no device token and names no activity: the
    /// monitor applies a 200 `update` or `end` to every activity subscribed to the channel.
    ///
    /// - Parameters:
    ///   - apnsPayload: the request body exactly as sent to APNs.
    ///   - channelID: the `apns-channel-id` header sent.
    ///   - priority: the `apns-priority` header sent: 1, 5 or 10 (10 when absent).
    ///   - expiration: the `apns-expiration` header sent (Unix seconds, 0 for none); it must be
    ///     0 on a channel that stores no message, which the monitor warns of.
    ///   - status: the HTTP status APNs answered (200); 0 when no answer came.
    ///   - reason: the `reason` of APNs' error body (see `apnsReason(fromResponseBody:)`), e.g.
    ///     `ChannelNotRegistered`, `BadExpirationDate`.
    ///   - apnsRequestID: the `apns-request-id` response header.
    ///   - apnsUniqueID: the `apns-unique-id` response header (development environment).
    ///   - latencyMs: from sending the request to the answer (or to giving up).
    ///   - occurredAt: when the request was sent.
    ///   - id: the idempotency key; `LiveActivityEvent.newID()` (time-ordered) by default.
    /// - Throws: `APNsPayloadError` for a payload the monitor could not take (as for a push to a
    ///   token), and `.startOnChannel` for `aps.event` `start`: a broadcast starts nothing.
    public static func pushSent(apnsPayload: Data, channelID: String, priority: PushSent.Priority? = nil,
                                expiration: Int? = nil, status: Int, reason: String? = nil,
                                apnsRequestID: String? = nil, apnsUniqueID: String? = nil, latencyMs: Double,
                                occurredAt: Date = Date(), app: String? = nil,
                                id: String? = nil) throws(APNsPayloadError) -> LiveActivityEvent {
        let payload = try decode(apnsPayload)
        guard let aps = payload.aps else { throw .missingAPS }
        guard let name = aps.event, let event = PushSent.Event(rawValue: name) else { throw .badEvent(aps.event) }
        if event == .start { throw .startOnChannel }
        let fields = PushSent(
            broadcast: event, channelID: channelID, status: status, latencyMs: latencyMs, priority: priority,
            reason: reason, apnsRequestID: apnsRequestID, apnsUniqueID: apnsUniqueID, expiration: expiration,
            payloadBytes: apnsPayload.count, timestamp: aps.timestamp.map(Date.init(timeIntervalSince1970:)),
            contentState: aps.contentState, staleDate: aps.staleDate.map(Date.init(timeIntervalSince1970:)),
            dismissalDate: aps.dismissalDate.map(Date.init(timeIntervalSince1970:)),
            relevanceScore: aps.relevanceScore, alert: Self.alert(aps.alert))
        return .pushSent(activityID: nil, fields, occurredAt: occurredAt, app: app, id: id)
    }

    /// The `channel.created` event for one request to the channel management API
    /// (`POST /1/apps/<bundle>/channels`) and APNs' answer: 201 with the new channel's id in
    /// the `apns-channel-id` header, or an error status and `reason`.
    ///
    /// - Parameters:
    ///   - requestBody: the body sent, e.g. `{"message-storage-policy": 1, "push-type": "LiveActivity"}`;
    ///     its `message-storage-policy` becomes `storage_policy` (left out when it is not 0 or 1:
    ///     APNs refuses such a request, and the answer is what the event records).
    ///   - status: the HTTP status APNs answered (201); 0 when no answer came.
    ///   - channelID: the `apns-channel-id` header of the answer; nil when APNs refused.
    ///   - reason: the `reason` of APNs' error body (`apnsReason(fromResponseBody:)`).
    ///   - latencyMs: from sending the request to the answer (or to giving up).
    ///   - occurredAt: when the request was sent.
    ///   - id: the idempotency key; `LiveActivityEvent.newID()` (time-ordered) by default.
    /// - Throws: `.missingChannelID` for a 2xx answer without a channel id: the monitor refuses it.
    public static func channelCreated(requestBody: Data, status: Int, channelID: String?, reason: String? = nil,
                                      latencyMs: Double, occurredAt: Date = Date(), app: String? = nil,
                                      id: String? = nil) throws(APNsPayloadError) -> LiveActivityEvent {
        if (200..<300).contains(status), channelID?.isEmpty ?? true { throw .missingChannelID }
        let body = (try? JSONDecoder().decode(JSONContent.self, from: requestBody))?.objectValue
        let policy: ChannelCreated.StoragePolicy? = switch body?["message-storage-policy"] {
        case .integer(let value)?: ChannelCreated.StoragePolicy(rawValue: Int(value))
        default: nil
        }
        return .channelCreated(ChannelCreated(channelID: channelID, status: status, reason: reason,
                                              storagePolicy: policy, latencyMs: latencyMs),
                               occurredAt: occurredAt, app: app, id: id)
    }

    /// The `channel.deleted` event for one request to the channel management API
    /// (`DELETE /1/apps/<bundle>/channels` with the `apns-channel-id` header) and APNs' answer:
    /// 204, or an error status and `reason` (e.g. 404 `BadChannelId`).
    public static func channelDeleted(channelID: String, status: Int, reason: String? = nil, latencyMs: Double,
                                      occurredAt: Date = Date(), app: String? = nil,
                                      id: String? = nil) -> LiveActivityEvent {
        .channelDeleted(ChannelDeleted(channelID: channelID, status: status, reason: reason, latencyMs: latencyMs),
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
