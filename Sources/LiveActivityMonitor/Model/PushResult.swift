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
        status == 410 || PushResult.invalidatingReasons.contains(reason ?? "")
    }

    static let invalidatingReasons: Set<String> = [
        "BadDeviceToken", "ExpiredToken", "Unregistered", "DeviceTokenNotForTopic",
    ]
}
