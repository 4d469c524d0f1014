import LiveActivityWire

/// One APNs request as the backend reported it: what it sent and what APNs answered.
public struct PushResult: Sendable, Equatable {
    public var kind: PushKind
    /// HTTP status APNs answered; 0 when no answer came.
    public var status: Int
    public var reason: String?
    public var latencyMs: Double
    /// `apns-priority`: 5 or 10.
    public var priority: Int
    public var payloadBytes: Int?

    /// A push is delivered only on a 200.
    public var accepted: Bool { status == 200 }

    /// APNs answers that mean the device token is dead (DESIGN.md section 2).
    public var invalidatesToken: Bool {
        // Most pushes give no reason: nothing to hash then (a set lookup a push, in profiles).
        status == 410 || reason.map(PushResult.invalidatingReasons.contains) == true
    }

    /// APNs' limit on a payload (DESIGN.md section 2).
    static let maxPayloadBytes = 4096

    /// Whether the status and the reason are among APNs' answers (DESIGN.md section 2); else
    /// the event carries the warning `unknown_reason`.
    var isKnownAnswer: Bool {
        Self.knownStatuses.contains(status) && (reason.map(Self.knownReasons.contains) ?? true)
    }

    /// APNs' HTTP statuses, and 0 for no answer.
    static let knownStatuses: Set<Int> = [0, 200, 400, 403, 404, 405, 410, 413, 429, 500, 503]

    /// APNs' reasons (its documentation's table of error strings).
    static let knownReasons: Set<String> = [
        "BadCollapseId", "BadDeviceToken", "BadExpirationDate", "BadMessageId", "BadPriority", "BadTopic",
        "DeviceTokenNotForTopic", "DuplicateHeaders", "IdleTimeout", "InvalidPushType", "MissingDeviceToken",
        "MissingTopic", "PayloadEmpty", "TopicDisallowed", "BadCertificate", "BadCertificateEnvironment",
        "ExpiredProviderToken", "Forbidden", "InvalidProviderToken", "MissingProviderToken",
        "UnrelatedKeyIdInToken", "BadEnvironmentKeyIdInToken", "BadPath", "MethodNotAllowed", "ExpiredToken",
        "Unregistered", "PayloadTooLarge", "TooManyProviderTokenUpdates", "TooManyRequests",
        "InternalServerError", "ServiceUnavailable", "Shutdown",
        // Broadcast (DESIGN.md section 2; the others it names are above).
        "BadChannelId", "ChannelNotRegistered", "MissingChannelId", "CannotCreateChannelConfig", "FeatureNotEnabled",
    ]

    static let invalidatingReasons: Set<String> = [
        "BadDeviceToken", "ExpiredToken", "Unregistered", "DeviceTokenNotForTopic",
    ]
}
