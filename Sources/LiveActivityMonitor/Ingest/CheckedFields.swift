import JSON
import LiveActivityWire

/// One event's field values after the schema's checks, as a decoder holds them: the general
/// validator as values read from the JSON tree, the one-pass scanner as places in the body.
/// `Event.assembled(_:from:body:)` reads them, so that both decoders make events the same way.
protocol CheckedFields {
    /// An identifier's text.
    func text(_ field: EventField) -> String?
    /// A number's value, or a date's Unix seconds.
    func number(_ field: EventField) -> Double?
    func integer(_ field: EventField) -> Int?
    /// An enumeration's value, as its position in the field's `Choices`.
    func choice(_ field: EventField) -> Int?
    /// A content object's text.
    func content(_ field: EventField) -> JSONText?
    /// A token's fingerprint.
    func fingerprint(_ field: EventField) -> String?
    /// Whether the field has a valid value (not absent, null or invalid).
    func isPresent(_ field: EventField) -> Bool
}

extension Event {
    /// The event that valid fields make, with its stored `body`: where each field goes, and
    /// the defaults of those that are absent. (A static function, not an initializer:
    /// delegating to `init(type:occurredAt:body:)` from an extension copied the whole event once
    /// more, and so did setting the body afterwards.)
    @inline(__always)
    static func assembled(_ type: EventType, from fields: some CheckedFields, body: String) -> Event {
        let occurredAt = fields.number(.occurredAt) ?? 0
        var event = Event(type: type, occurredAt: occurredAt, body: body)
        event.key = fields.text(.id)
        event.activityID = fields.text(.activityID)
        event.bookingID = fields.text(.bookingID)
        event.attributesType = fields.text(.attributesType)
        event.app = fields.text(.app)
        event.contentState = fields.content(.contentState)
        event.attributes = fields.content(.attributes)
        event.staleDate = fields.number(.staleDate)
        event.dismissalDate = fields.number(.dismissalDate)
        event.relevanceScore = fields.number(.relevanceScore)
        event.timestamp = fields.number(.timestamp) ?? occurredAt
        event.source = fields.choice(.source).map { StartSource.allCases[$0] } ?? .app
        event.dismissalPolicy = fields.choice(.dismissalPolicy).map { DismissalPolicy.allCases[$0] }
        event.hasAlert = fields.isPresent(.alert)
        event.deviceID = fields.text(.deviceID)
        event.inputPushChannel = fields.text(.inputPushChannel)
        event.startDate = fields.number(.startDate)
        event.channelID = fields.text(.channelID)
        event.expiration = fields.number(.expiration)
        let kind = fields.choice(.event).map({ PushKind.allCases[$0] })
        // A start push's token: `push_to_start_token`, or `push_token` (which keeps working for it).
        event.tokenFingerprint = (kind == .start ? fields.fingerprint(.pushToStartToken) : nil) ?? fields.fingerprint(.pushToken)
        if type == .pushSent, let kind,
           let status = fields.integer(.status), let latencyMs = fields.number(.latencyMs) {
            event.push = PushResult(kind: kind, status: status, reason: fields.text(.reason), latencyMs: latencyMs,
                                    priority: fields.integer(.priority) ?? 10, payloadBytes: fields.integer(.payloadBytes))
        }
        if let operation = type.channelOperation, let status = fields.integer(.status) {
            event.channelRequest = ChannelRequest(operation: operation, status: status, reason: fields.text(.reason),
                                                  latencyMs: fields.number(.latencyMs),
                                                  storagePolicy: fields.integer(.storagePolicy))
        }
        return event
    }
}
