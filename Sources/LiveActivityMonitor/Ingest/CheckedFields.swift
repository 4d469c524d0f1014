import JSON

/// One event's field values after the schema's checks, as a decoder holds them: the general
/// validator as values read from the JSON tree, the one-pass scanner as places in the body.
/// `Event.init(type:checked:)` reads them, so that both decoders make events the same way.
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
}

extension Event {
    /// The event that valid fields make: where each field goes, and the defaults of those
    /// that are absent. The body is left for the caller.
    init(type: EventType, checked fields: some CheckedFields) {
        let occurredAt = fields.number(.occurredAt) ?? 0
        self.init(type: type, occurredAt: occurredAt)
        key = fields.text(.id)
        activityID = fields.text(.activityID)
        bookingID = fields.text(.bookingID)
        attributesType = fields.text(.attributesType)
        app = fields.text(.app)
        contentState = fields.content(.contentState)
        attributes = fields.content(.attributes)
        staleDate = fields.number(.staleDate)
        dismissalDate = fields.number(.dismissalDate)
        relevanceScore = fields.number(.relevanceScore)
        timestamp = fields.number(.timestamp) ?? occurredAt
        source = fields.choice(.source).map { StartSource.allCases[$0] } ?? .app
        dismissalPolicy = fields.choice(.dismissalPolicy).map { DismissalPolicy.allCases[$0] }
        tokenFingerprint = fields.fingerprint(.pushToken)
        if type == .pushSent, let kind = fields.choice(.event).map({ PushKind.allCases[$0] }),
           let status = fields.integer(.status), let latencyMs = fields.number(.latencyMs) {
            push = PushResult(kind: kind, status: status, reason: fields.text(.reason), latencyMs: latencyMs,
                              priority: fields.integer(.priority) ?? 10, payloadBytes: fields.integer(.payloadBytes))
        }
    }
}
