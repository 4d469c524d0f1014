/// Why an APNs payload could not be turned into a `push.sent` event.
public enum APNsPayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The payload is not a JSON object.
    case notJSON(String)
    /// There is no `aps` object.
    case missingAPS
    /// `aps.event` is missing or not `start`, `update` or `end`.
    case badEvent(String?)

    public var description: String {
        switch self {
        case .notJSON(let detail): "the APNs payload is not a JSON object: \(detail)"
        case .missingAPS: "the APNs payload has no \"aps\" object"
        case .badEvent(let event):
            "aps.event must be \"start\", \"update\" or \"end\", not \(event.map { "\"\($0)\"" } ?? "missing")"
        }
    }
}
