import JSON

/// A push's content-state as the rules read it: read once (`ContentReading`: parsed and
/// digested where the event was decoded, else here on first need), then its verdict per
/// attributes type (content shape). A broadcast reads the same content for each of its
/// subscribers: one `PushContent` serves them all, where a parse per subscriber was most of a
/// 10,000-subscriber broadcast's cost.
struct PushContent {
    let text: JSONText?
    /// The replay's stored verdict (`Event.contentVerdict`): it stands, for every type.
    private let storedVerdict: String?
    private var reading: ContentReading?
    /// The verdict for the first type asked (a push to an activity asks once), and for others
    /// (a broadcast's subscribers): a dictionary made for every push was an allocation on the writer.
    private var firstVerdict: (type: String, verdict: String?)?
    private var otherVerdicts: [String: String?] = [:]

    init(_ event: Event) {
        text = event.contentState
        storedVerdict = event.contentVerdict
        reading = event.contentReading
    }

    private mutating func read() -> ContentReading? {
        if let reading { return reading }
        reading = text.map(ContentReading.init)
        return reading
    }

    /// `ContentDigest` of the content; nil when there is none.
    mutating func digest() -> UInt64? {
        read()?.digest
    }

    /// Why the phone cannot decode the content as `type`'s content shape, or nil.
    mutating func verdict(as type: String, _ shapes: ContentShapes) -> String? {
        guard text != nil else { return nil }
        if let storedVerdict { return storedVerdict }
        if let firstVerdict, firstVerdict.type == type { return firstVerdict.verdict }
        if let known = otherVerdicts[type] { return known }
        let verdict = shapes.verdict(on: read(), of: type)
        if firstVerdict == nil { firstVerdict = (type, verdict) } else { otherVerdicts[type] = .some(verdict) }
        return verdict
    }
}
