import JSON

/// A push's content-state as the rules read it: parsed once, on first need, then its digest
/// (delivery evidence) and its verdict per attributes type (content shape). A broadcast reads
/// the same content for each of its subscribers: one `PushContent` serves them all, where a
/// parse per subscriber was most of a 10,000-subscriber broadcast's cost.
struct PushContent {
    let text: JSONText?
    /// The replay's stored verdict (`Event.contentVerdict`): it stands, for every type.
    private let storedVerdict: String?
    private var parsed: JSONValue??
    private var digestMemo: UInt64??
    /// The verdict for the first type asked (a push to an activity asks once), and for others
    /// (a broadcast's subscribers): a dictionary made for every push was an allocation on the writer.
    private var firstVerdict: (type: String, verdict: String?)?
    private var otherVerdicts: [String: String?] = [:]

    init(_ event: Event) {
        text = event.contentState
        storedVerdict = event.contentVerdict
    }

    private mutating func value() -> JSONValue? {
        if let parsed { return parsed }
        let value = text.flatMap { try? JSONParser.parse($0.text) }
        parsed = .some(value)
        return value
    }

    /// `ContentDigest` of the content; nil when there is none.
    mutating func digest() -> UInt64? {
        if let digestMemo { return digestMemo }
        let digest = value().map(ContentDigest.of)
        digestMemo = .some(digest)
        return digest
    }

    /// Why the phone cannot decode the content as `type`'s content shape, or nil.
    mutating func verdict(as type: String, _ shapes: ContentShapes) -> String? {
        guard text != nil else { return nil }
        if let storedVerdict { return storedVerdict }
        if let firstVerdict, firstVerdict.type == type { return firstVerdict.verdict }
        if let known = otherVerdicts[type] { return known }
        let verdict = shapes.verdict(on: value(), of: type)
        if firstVerdict == nil { firstVerdict = (type, verdict) } else { otherVerdicts[type] = .some(verdict) }
        return verdict
    }
}
