import JSON

extension EventValidator {
    /// An event read back from the `events` table (for replay after a crash): its stored text
    /// validated again, with the columns for what the text does not hold exactly. The text has
    /// dates to the millisecond and may carry an inherited booking; the columns keep the time
    /// as received and the booking the client gave. Nil if the text is not a valid event.
    static func stored(body: String, key: String?, bookingID: String?, occurredAt: Double) -> Event? {
        guard case .object(var object)? = try? JSONParser.parse(Array(body.utf8)) else { return nil }
        // A token is stored as its fingerprint (`StoredForm.fingerprint`): a placeholder token
        // of the row's shortest length stands in for it while the text is validated.
        var fingerprints: [EventField: String] = [:]
        for field in [EventField.pushToken, .pushToStartToken] {
            let tokenRow = field.spec
            guard case .token(let token) = tokenRow.kind else { return nil }
            switch object.removeValue(forKey: EventSchema.storedKeys[Int(field.rawValue)]) {
            case .string(let value)?:
                fingerprints[field] = value
                object[tokenRow.label] = .string(String(repeating: "0", count: token.minLength + token.minLength % 2))
            case nil, .null?: break
            default: return nil
            }
        }
        // An absent `timestamp` is `occurred_at` (`Event.assembled(_:from:body:)`), which the
        // column has exactly.
        let hasTimestamp = object[EventField.timestamp.spec.label].map { $0 != .null } ?? false
        guard case .valid(var event) = validate(.object(object), index: 0) else { return nil }
        event.key = key
        event.bookingID = bookingID
        event.occurredAt = occurredAt
        if !hasTimestamp { event.timestamp = occurredAt }
        event.tokenFingerprint = (event.push?.kind == .start ? fingerprints[.pushToStartToken] : nil) ?? fingerprints[.pushToken]
        event.body = body
        return event
    }
}
