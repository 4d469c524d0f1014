/// `device.push_to_start_token`: the device's push-to-start token for one attributes type
/// (`Activity<…>.pushToStartTokenUpdates`, iOS 17.2+). A newer one for the same device and type
/// supersedes the old: start pushes to the old one start nothing. The event names no activity;
/// `attributes_type` is required on it.
public struct DevicePushToStartToken: EventPayload, Hashable {
    static let kind = LiveActivityEvent.Kind.devicePushToStartToken

    /// Your app's installation id, stable across launches (never shown in a metric label).
    public var deviceID: String
    public var pushToken: PushToken

    public init(deviceID: String, pushToken: PushToken) {
        self.deviceID = deviceID
        self.pushToken = pushToken
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case deviceID = "device_id"
        case pushToken = "push_token"
    }
    typealias Field = CodingKeys
}
