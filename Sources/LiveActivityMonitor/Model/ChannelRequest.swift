/// One call to APNs' channel management API as the backend reported it (`channel.created`,
/// `channel.deleted`: DESIGN.md section 3): what it asked and what APNs answered.
public struct ChannelRequest: Sendable, Equatable {
    public enum Operation: String, Sendable, CaseIterable {
        case create, delete
    }

    public var operation: Operation
    /// HTTP status APNs answered (201 for a create, 204 for a delete); 0 when no answer came.
    public var status: Int
    public var reason: String?
    public var latencyMs: Double?
    /// `message-storage-policy` of a create: 0 keeps no message, 1 the most recent one.
    public var storagePolicy: Int?

    /// The channel exists (or stopped existing) only on a 2xx answer.
    public var succeeded: Bool { (200..<300).contains(status) }

    /// The statuses the channel management API answers, and 0 for no answer: anything else is
    /// `other` in a label.
    /// Whether the status and the reason are among APNs' answers; else the warning `unknown_reason`.
    var isKnownAnswer: Bool {
        Self.knownStatuses.contains(status) && (reason.map(PushResult.knownReasons.contains) ?? true)
    }

    static let knownStatuses: Set<Int> = [0, 200, 201, 204, 400, 403, 404, 405, 413, 429, 500, 503]
}
