import JSON

extension EventValidator {
    /// Stands in for the token a stored text replaced by its fingerprint, to validate it again.
    private static let tokenPlaceholder = JSONValue.string(String(repeating: "0", count: 64))

    /// An event read back from the `events` table (for replay after a crash): its stored text
    /// validated again, with the columns for what the text does not hold exactly. The text has
    /// dates to the millisecond and may carry an inherited booking; the columns keep the time
    /// as received and the booking the client gave. Nil if the text is not a valid event.
    static func stored(body: String, key: String?, bookingID: String?, occurredAt: Double) -> Event? {
        guard case .object(var object)? = try? JSONParser.parse(Array(body.utf8)) else { return nil }
        var fingerprint: String?
        switch object.removeValue(forKey: "token_fingerprint") {
        case .string(let value)?:
            fingerprint = value
            object["push_token"] = tokenPlaceholder
        case nil, .null?: break
        default: return nil
        }
        let hasTimestamp = object["timestamp"].map { $0 != .null } ?? false
        guard case .valid(var event) = validate(.object(object), index: 0) else { return nil }
        event.key = key
        event.bookingID = bookingID
        event.occurredAt = occurredAt
        if !hasTimestamp { event.timestamp = occurredAt }
        event.tokenFingerprint = fingerprint
        event.body = body
        return event
    }
}
