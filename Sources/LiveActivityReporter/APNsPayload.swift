import Foundation

/// The parts of an APNs Live Activity payload (`{"aps": {…}}`) that a `push.sent` event
/// records. Dates in a payload are Unix seconds.
struct APNsPayload: Decodable {
    struct APS: Decodable {
        var event: String?
        var timestamp: Double?
        var contentState: JSONContent?
        var staleDate: Double?
        var dismissalDate: Double?
        var relevanceScore: Double?
        var alert: JSONContent?
        var attributesType: String?
        var attributes: JSONContent?

        enum CodingKeys: String, CodingKey {
            case event, timestamp
            case contentState = "content-state"
            case staleDate = "stale-date"
            case dismissalDate = "dismissal-date"
            case relevanceScore = "relevance-score"
            case alert
            case attributesType = "attributes-type"
            case attributes
        }
    }

    var aps: APS?
}
