import JSON
import LiveActivityWire

/// Every field an ingest event may have (DESIGN.md section 3), in the order of `EventSchema.fields`.
/// Its raw value is its row, and its bit in a set of fields.
enum EventField: UInt8, CaseIterable, Sendable {
    case type, event, occurredAt, id, activityID, bookingID, attributesType, app
    case contentState, attributes, staleDate, dismissalDate, relevanceScore, timestamp, source, dismissalPolicy
    case alert, pushToken, status, latencyMs, priority, payloadBytes, reason, apnsID, apnsUniqueID
    case deviceID, pushToStartToken, inputPushChannel, startDate
    case channelID, apnsRequestID, expiration, storagePolicy

    /// Its row in the schema.
    var spec: FieldSpec { EventSchema.fields[Int(rawValue)] }
    /// Its bit in a set of fields (`UInt64`: room for 64).
    var bit: UInt64 { 1 << UInt64(rawValue) }
}

/// The ingest schema (DESIGN.md section 3): one row per event field, with its JSON kind, its
/// limits, and the types that allow and require it. Everything that reads an event reads it
/// from here:
/// - `EventValidator` (the general path) checks each present field by its row, in the rows'
///   order, which is the order of one event's errors in a 422;
/// - `PushEventScanner` (the one-pass path for one `push.sent`) compiles the rows once into
///   plain values (`PushEventScanner.Rules`) and checks the same limits while it reads;
/// - both stored-body writers (`EventValidator.storedBody`, `PushEventScanner.write`) write a
///   member as its kind says (dates as RFC 3339, the token as its fingerprint), and
///   `EventValidator.stored` reads a stored body back through the same rows;
/// - `Event.assembled(_:from:body:)` is the one place where the checked values become an `Event`;
/// - the reporter library's field tests compare its fields with these rows.
///
/// Adding a field: a case in `EventField` and its row here (then its use in
/// `Event.assembled(_:from:body:)` and the engine, if it has one). Both decoders take it from there.
enum EventSchema {
    /// Ids, bookings and attributes types: the longest the read API's search takes too.
    static let maxIDLength = 128
    /// When an event happened (`occurred_at`): outside 2000-01-01 … 2100-01-01 it is refused,
    /// since the server could not place it in time. (One in the future of its receipt takes
    /// effect at its receipt, with a warning: `StateEngine.dated`.)
    static let dateWindow = 946_684_800.0..<4_102_444_800.0
    /// The dates a push or a device reports (`timestamp`, `stale_date`, `dismissal_date`): any,
    /// as sent, since they are what the phone compares (a timestamp in milliseconds is the
    /// newest there is: DESIGN.md section 2), with warnings rather than a 422. Bounded only where
    /// seconds stop having milliseconds as 64-bit integers (RFC 3339 text to the millisecond,
    /// `RFC3339.format`): about ±285,000 years, beyond microseconds since 1970.
    static let valueWindow = -9e15..<9e15
    /// ActivityKit's limit on a content state (and on attributes), as written.
    static let maxContentBytes = 4096

    /// The rows, in `EventField` order.
    static let fields: [FieldSpec] = checked([
        FieldSpec(.type, "type", .eventType(maxLength: 64), allowed: .all, required: .all),
        // Read before the rows whose requirement tells a push-to-start from other pushes.
        FieldSpec(.event, "event", .enumeration(.init(PushKind.self)),
                  allowed: .pushSent, required: .pushSent, checked: .whereAllowed),
        FieldSpec(.occurredAt, "occurred_at", .date(dateWindow), allowed: .all, required: .all),
        FieldSpec(.id, "id", .identifier(maxLength: maxIDLength), allowed: .all),
        FieldSpec(.activityID, "activity_id", .identifier(maxLength: maxIDLength),
                  allowed: aboutActivities,
                  required: EventKinds.all.subtracting([.pushToStart, .pushBroadcast, .devicePushToStartToken, .channelRequest])),
        FieldSpec(.bookingID, "booking_id", .identifier(maxLength: maxIDLength),
                  allowed: aboutActivities, required: [.activityStarted, .pushToStart], nullLeftOut: true),
        FieldSpec(.attributesType, "attributes_type", .identifier(maxLength: maxIDLength),
                  allowed: aboutActivities, required: [.activityStarted, .devicePushToStartToken]),
        FieldSpec(.app, "app", .identifier(maxLength: 255), allowed: .all),
        FieldSpec(.contentState, "content_state", .content(maxBytes: maxContentBytes),
                  allowed: [.activityStarted, .activityUpdated, .activityEnded, .pushSent, .activityObserved],
                  required: [.activityStarted, .activityUpdated, .activityObserved]),
        FieldSpec(.attributes, "attributes", .content(maxBytes: maxContentBytes), allowed: [.activityStarted, .pushSent]),
        FieldSpec(.staleDate, "stale_date", .date(valueWindow),
                  allowed: [.activityStarted, .activityUpdated, .pushSent, .activityObserved]),
        FieldSpec(.dismissalDate, "dismissal_date", .date(valueWindow), allowed: [.activityEnded, .pushSent]),
        FieldSpec(.relevanceScore, "relevance_score", .number(-1e9...1e9),
                  allowed: [.activityStarted, .activityUpdated, .pushSent, .activityObserved]),
        FieldSpec(.timestamp, "timestamp", .date(valueWindow), allowed: [.activityUpdated, .activityEnded, .pushSent]),
        FieldSpec(.source, "source", .enumeration(.init(StartSource.self)), allowed: .activityStarted),
        FieldSpec(.dismissalPolicy, "dismissal_policy",
                  .enumeration(.init(DismissalPolicy.self, requiring: (.after, .dismissalDate))), allowed: .activityEnded),
        FieldSpec(.alert, "alert", .alert(maxLength: 1024), allowed: [.activityUpdated, .pushSent]),
        FieldSpec(.pushToken, "push_token",
                  .token(.init(minLength: 16, maxLength: 1024, storedName: "token_fingerprint")),
                  allowed: [.activityStarted, .activityTokenUpdated, .pushSent, .devicePushToStartToken],
                  // A start push names its token here or in `push_to_start_token`: one of the two
                  // (`EventValidator.check`; the one-pass scanner declines a body without it).
                  required: [.activityTokenUpdated, .pushUpdateOrEnd, .devicePushToStartToken]),
        // A push result's parts: read once its `event` is valid (a channel request has no `event`).
        FieldSpec(.status, "status",
                  .integer(.init(0...599, refusing: 1...99, "must be an HTTP status (100–599), or 0 when APNs gave no answer")),
                  allowed: answered, required: answered, checked: .withValid(.event)),
        FieldSpec(.latencyMs, "latency_ms", .number(0...3_600_000),
                  allowed: answered, required: .pushSent, checked: .withValid(.event)),
        // 1 only for a broadcast: on a token push it is stored with a warning (`priority1_on_token`).
        FieldSpec(.priority, "priority", .integer(.init(1...10, refusing: 2...4, and: 6...9, "must be 1, 5 or 10")),
                  allowed: .pushSent, checked: .withValid(.event)),
        FieldSpec(.payloadBytes, "payload_bytes", .integer(.init(0...1_048_576)),
                  allowed: .pushSent, checked: .withValid(.event)),
        FieldSpec(.reason, "reason", .identifier(maxLength: 64), allowed: answered, checked: .withValid(.event)),
        FieldSpec(.apnsID, "apns_id", .identifier(maxLength: 64), allowed: .pushSent, checked: .withValid(.event)),
        FieldSpec(.apnsUniqueID, "apns_unique_id", .identifier(maxLength: 64), allowed: .pushSent, checked: .withValid(.event)),
        // Version 2: push-to-start.
        FieldSpec(.deviceID, "device_id", .identifier(maxLength: maxIDLength),
                  allowed: [.activityStarted, .devicePushToStartToken], required: .devicePushToStartToken),
        // The token a start push went to (read on `event: "start"` only; `push_token` works too).
        FieldSpec(.pushToStartToken, "push_to_start_token",
                  .token(.init(minLength: 16, maxLength: 1024, storedName: "push_to_start_token_fingerprint")),
                  allowed: .pushSent),
        FieldSpec(.inputPushChannel, "input_push_channel", .identifier(maxLength: 256), allowed: .pushSent),
        // Version 2: a scheduled start (iOS 26): the activity is `pending` until it.
        FieldSpec(.startDate, "start_date", .date(dateWindow), allowed: .activityStarted),
        // Version 2: broadcasts. A `push.sent` with `channel_id` is a broadcast (`EventKinds.pushBroadcast`):
        // it names no activity and no token. On `activity.started`, the channel it subscribes to.
        // On `channel.created` it is required when APNs created one (a 2xx: `EventValidator.check`).
        FieldSpec(.channelID, "channel_id", .identifier(maxLength: 256),
                  allowed: [.activityStarted, .pushSent, .channelRequest], required: .channelDeleted),
        FieldSpec(.apnsRequestID, "apns_request_id", .identifier(maxLength: 64), allowed: .pushSent,
                  checked: .withValid(.event)),
        // `apns-expiration`: Unix seconds, 0 for none.
        FieldSpec(.expiration, "expiration", .number(0...9e15), allowed: .pushSent, checked: .withValid(.event)),
        // Version 2: channel management. `message-storage-policy`: 0 keeps no message, 1 the latest.
        FieldSpec(.storagePolicy, "storage_policy", .integer(.init(0...1)), allowed: .channelCreated),
    ])

    /// Every type but the channel requests, which name a channel and no activity or booking.
    private static let aboutActivities = EventKinds.all.subtracting(.channelRequest)
    /// The types that carry APNs' answer: a push's, or a channel request's.
    private static let answered = EventKinds.pushSent.union(.channelRequest)

    /// Finds a field by its member name's bytes.
    static let lookup = FieldLookup(fields)

    /// How each field's member is written in the stored body, by raw value.
    static let storedForms: [FieldSpec.StoredForm] = fields.map(\.storedForm)
    /// Each field's member name in the stored body (a token's differs), by raw value.
    static let storedKeys: [String] = fields.map { row in
        if case .token(let token) = row.kind { token.storedName.description } else { row.label }
    }

    /// The fields each type allows, as a set of bits (`EventField.bit`), by `EventKinds` bit.
    static let allowedBits: [UInt64] = (0..<16).map { bit in
        fields.reduce(0) { $1.allowed.contains(EventKinds(rawValue: 1 << bit)) ? $0 | $1.field.bit : $0 }
    }

    /// The fields an event of `type` may have, as bits.
    static func allowed(on type: EventType) -> UInt64 {
        allowedBits[EventKinds(type).rawValue.trailingZeroBitCount]
    }

    /// The names of the fields that every one of `kinds` allows (for the reporter's tests).
    static func names(allowedOn kinds: EventKinds) -> Set<String> {
        Set(fields.filter { $0.allowed.isSuperset(of: kinds) }.map(\.label))
    }

    /// The names of the fields that every one of `kinds` requires (for the reporter's tests).
    static func names(requiredOn kinds: EventKinds) -> Set<String> {
        Set(fields.filter { $0.required.isSuperset(of: kinds) }.map(\.label))
    }

    /// "outside 2000-01-01 … 2100-01-01", from a window.
    static func windowText(_ window: Range<Double>) -> String {
        guard RFC3339.hasForm(window.lowerBound), RFC3339.hasForm(window.upperBound) else {
            // The window is half open: say so, or its upper bound reads as a value it takes.
            return "outside \(JSONNumber(window.lowerBound)) … \(JSONNumber(window.upperBound)) seconds (the upper bound excluded)"
        }
        return "outside \(RFC3339.format(window.lowerBound).prefix(10)) … \(RFC3339.format(window.upperBound).prefix(10))"
    }

    static let dateWindowText = windowText(dateWindow)

    /// The table, checked once: a row per field at the field's raw value, and the order the
    /// validator relies on.
    private static func checked(_ rows: [FieldSpec]) -> [FieldSpec] {
        precondition(rows.map(\.field) == EventField.allCases, "EventSchema.fields: one row per EventField, in its order")
        precondition(rows.count <= 64, "a set of fields is a UInt64")
        for (position, row) in rows.enumerated() {
            // Unknown fields are found before `event` is read: a push.sent field is one of both kinds.
            precondition(row.allowed.contains(.pushToStart) == row.allowed.contains(.pushUpdateOrEnd),
                         "\(row.name): allowed on both kinds of push.sent or neither")
            // Which push is which is known once `event` is read.
            if row.required.contains(.pushToStart) != row.required.contains(.pushUpdateOrEnd) {
                precondition(position > Int(EventField.event.rawValue), "\(row.name): its requirement needs event's row first")
            }
            if case .enumeration(let choices) = row.kind, let requiring = choices.requiring {
                precondition(requiring.field.rawValue < row.field.rawValue, "\(row.name): the field it requires must come first")
            }
        }
        return rows
    }
}
