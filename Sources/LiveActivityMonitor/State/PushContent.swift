import JSON
import Prometheus

/// A push's verdicts per attributes type (content shape), on its content as read where it was
/// decoded (`Event.contentReading`; `StateEngine` reads an event that was not before any rule
/// does). A broadcast asks for each of its subscribers: one `PushContent` serves them all.
/// It holds only its verdicts: the event's content was copied into it once (three optionals,
/// each through its metadata) and showed in the writer's profile (PERFORMANCE.md, session 36).
struct PushContent {
    /// The verdict for the first type asked (a push to an activity asks once), and for others
    /// (a broadcast's subscribers): a dictionary made for every push was an allocation on the writer.
    /// Types by their bytes, as `ContentShapes` keeps their shapes.
    private var firstVerdict: (type: String, verdict: String?)?
    private var otherVerdicts: [ExactString: String?] = [:]

    /// Why the phone cannot decode `event`'s content as `type`'s content shape, or nil: the
    /// replay's stored verdict (`Event.contentVerdict`) stands, for every type, and a replayed
    /// broadcast's for its type (`Event.broadcastVerdicts`; a replay's shapes judge no other).
    mutating func verdict(on event: borrowing Event, as type: String, _ shapes: ContentShapes) -> String? {
        guard event.contentState != nil else { return nil }
        if let stored = event.contentVerdict { return stored }
        for stored in event.broadcastVerdicts where ExactText.equal(stored.attributesType, type) { return stored.detail }
        if let firstVerdict, ExactText.equal(firstVerdict.type, type) { return firstVerdict.verdict }
        if let known = otherVerdicts[ExactString(type)] { return known }
        // Read in place: the reading as a value would be copied.
        let verdict = event.contentReading != nil ? shapes.verdict(on: event.contentReading, of: type)
            : shapes.verdict(on: event.readContentState, of: type)
        if firstVerdict == nil { firstVerdict = (type, verdict) } else { otherVerdicts[ExactString(type)] = .some(verdict) }
        return verdict
    }
}
