import JSON
import LiveActivityWire

/// One validated ingest event. Raw push tokens never reach this type: only their fingerprint.
public struct Event: Sendable {
    /// The client's idempotency key (`id`).
    public var key: String?
    public var type: EventType
    public var activityID: String?
    public var bookingID: String?
    public var attributesType: String?
    /// Unix seconds.
    public var occurredAt: Double
    public var app: String?
    /// Kept as text: the server stores and serves them as they came and never reads inside.
    public var contentState: JSONText?
    public var attributes: JSONText?
    public var staleDate: Double?
    public var relevanceScore: Double?
    public var tokenFingerprint: String?
    public var source: StartSource = .app
    /// The content's `aps.timestamp` (defaults to `occurredAt`).
    public var timestamp: Double
    public var dismissalDate: Double?
    public var dismissalPolicy: DismissalPolicy?
    public var push: PushResult?
    /// A `channel.created` or `channel.deleted`: the request and APNs' answer.
    public var channelRequest: ChannelRequest?
    /// Whether it carries an `alert` (a push-to-start needs one).
    public var hasAlert = false
    /// A replay's: the verdict the writer stored with this event when its content would not
    /// decode (`EventEffect.detail`); nil when none was stored. Never set on an ingested event.
    public var contentVerdict: String?
    /// A replay's, for a broadcast: the verdicts the writer stored for the attributes types of
    /// the subscribers whose content would not decode (`broadcast_verdicts`), one per type,
    /// by the type's bytes. Empty when none was stored (and on an ingested event).
    public var broadcastVerdicts: [(attributesType: String, detail: String)] = []
    /// `contentState` parsed and digested where the event was decoded (`readContent`), so that
    /// the writer need not; nil when it was not (the engine then reads it itself).
    var contentReading: ContentReading?
    /// The app's installation id (`device.push_to_start_token`, `activity.started`); never a label.
    public var deviceID: String?
    /// A start push's `input_push_channel`, stored and kept as sent.
    public var inputPushChannel: String?
    /// An `activity.started`'s scheduled start (iOS 26): `pending` until then.
    public var startDate: Double?
    /// A broadcast's channel (`push.sent`), or the channel an `activity.started` subscribes to.
    public var channelID: String?
    /// A push's `apns-expiration` (Unix seconds, 0 for none).
    public var expiration: Double?
    /// A `push.sent` to a channel rather than to an activity's token.
    public var isBroadcast: Bool { type == .pushSent && channelID != nil }
    /// The event as ingested, as the JSON object text stored and served by the read API: dates
    /// as RFC 3339, `push_token` replaced by `token_fingerprint`, a null `booking_id` left out.
    public var body: String

    public init(type: EventType, occurredAt: Double, body: String = "{}") {
        self.type = type
        self.occurredAt = occurredAt
        self.timestamp = occurredAt
        self.body = body
    }
}
