extension Event {
    /// The fields in which two events differ, compared exactly: strings and texts by their
    /// bytes (Swift's `==` is canonical equivalence), numbers by their bit patterns (so that
    /// `-0.0` is not `0.0`). Empty when the events are the same in every field. For the checks
    /// that ingest's fast path makes the same event as the general decoder (tests, fuzzer).
    public func differences(from other: Event) -> [String] {
        func same(_ a: String?, _ b: String?) -> Bool {
            switch (a, b) {
            case (nil, nil): true
            case (let a?, let b?): a.utf8.elementsEqual(b.utf8)
            default: false
            }
        }
        func same(_ a: Double?, _ b: Double?) -> Bool { a?.bitPattern == b?.bitPattern }
        var fields: [String] = []
        if !same(key, other.key) { fields.append("key") }
        if type != other.type { fields.append("type") }
        if !same(activityID, other.activityID) { fields.append("activityID") }
        if !same(bookingID, other.bookingID) { fields.append("bookingID") }
        if !same(attributesType, other.attributesType) { fields.append("attributesType") }
        if !same(occurredAt, other.occurredAt) { fields.append("occurredAt") }
        if !same(app, other.app) { fields.append("app") }
        if !same(contentState?.text, other.contentState?.text) { fields.append("contentState") }
        if !same(attributes?.text, other.attributes?.text) { fields.append("attributes") }
        if !same(staleDate, other.staleDate) { fields.append("staleDate") }
        if !same(relevanceScore, other.relevanceScore) { fields.append("relevanceScore") }
        if !same(tokenFingerprint, other.tokenFingerprint) { fields.append("tokenFingerprint") }
        if source != other.source { fields.append("source") }
        if !same(timestamp, other.timestamp) { fields.append("timestamp") }
        if !same(dismissalDate, other.dismissalDate) { fields.append("dismissalDate") }
        if dismissalPolicy != other.dismissalPolicy { fields.append("dismissalPolicy") }
        if hasAlert != other.hasAlert { fields.append("hasAlert") }
        if !same(deviceID, other.deviceID) { fields.append("deviceID") }
        if !same(inputPushChannel, other.inputPushChannel) { fields.append("inputPushChannel") }
        if !same(startDate, other.startDate) { fields.append("startDate") }
        if !same(channelID, other.channelID) { fields.append("channelID") }
        if !same(expiration, other.expiration) { fields.append("expiration") }
        switch (push, other.push) {
        case (nil, nil): break
        case (let a?, let b?):
            if a.kind != b.kind || a.status != b.status || !same(a.reason, b.reason) || !same(a.latencyMs, b.latencyMs)
                || a.priority != b.priority || a.payloadBytes != b.payloadBytes {
                fields.append("push")
            }
        default: fields.append("push")
        }
        if !same(body, other.body) { fields.append("body") }
        return fields
    }
}
