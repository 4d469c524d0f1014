import Foundation
import LiveActivityWire

/// One event for `POST /v1/events` (DESIGN.md section 3): the fields every event has, plus the
/// fields of its type. Encodes to exactly the JSON the monitor's decoder accepts.
///
/// Build one with the factory for its type, e.g.
/// `.started(activityID:bookingID:attributesType:_:)`, `.tokenUpdated(activityID:pushToken:)`,
/// `.pushSent(activityID:_:)`, or `pushSent(apnsPayload:…)` from an APNs request.
///
/// Two groups of types share the envelope differently (`Kind.namesActivity`): the types about
/// activities carry `activity_id`, `booking_id` and `attributes_type`; the channel management
/// results (`channel.created`, `channel.deleted`) name a channel and never an activity, so their
/// factories take none of the three and the encoder refuses an event of theirs that sets one.
public struct LiveActivityEvent: Sendable, Hashable, Encodable, Identifiable {
    /// The event types, by their wire names (the monitor's own `EventType`).
    public typealias Kind = EventType

    /// The type of the event with its own fields.
    public enum Payload: Sendable, Hashable {
        case started(ActivityStarted)
        case updated(ActivityUpdated)
        case tokenUpdated(ActivityTokenUpdated)
        case stale
        case ended(ActivityEnded)
        case dismissed
        case pushSent(PushSent)
        case observed(ActivityObserved)
        case pushToStartToken(DevicePushToStartToken)
        case channelCreated(ChannelCreated)
        case channelDeleted(ChannelDeleted)

        public var kind: Kind {
            switch self {
            case .started: ActivityStarted.kind
            case .updated: ActivityUpdated.kind
            case .tokenUpdated: ActivityTokenUpdated.kind
            case .stale: .activityStale
            case .ended: ActivityEnded.kind
            case .dismissed: .activityDismissed
            case .pushSent: PushSent.kind
            case .observed: ActivityObserved.kind
            case .pushToStartToken: DevicePushToStartToken.kind
            case .channelCreated: ChannelCreated.kind
            case .channelDeleted: ChannelDeleted.kind
            }
        }
    }

    /// The idempotency key: the monitor stores and counts an event with a given id once, so
    /// the reporter can resend a batch whose answer was lost. `newID()` unless you choose one.
    public var id: String
    /// ActivityKit's `Activity.id`. Required, except on a `push.sent` with event `start`, on a
    /// broadcast (a `push.sent` to a channel) and on `device.push_to_start_token`; never set on
    /// a channel management result.
    public var activityID: String?
    /// Your booking, order or session id. Required on `activity.started` and on push-to-start;
    /// later events of the activity inherit it.
    public var bookingID: String?
    /// The `ActivityAttributes` type name, e.g. `TimerWidgetAttributes`. Required on
    /// `activity.started`.
    public var attributesType: String?
    /// When it happened (on the phone, or when the backend sent the push).
    public var occurredAt: Date
    /// The app's bundle id.
    public var app: String?
    public var payload: Payload

    public var kind: Kind { payload.kind }

    public init(_ payload: Payload, activityID: String?, bookingID: String? = nil,
                attributesType: String? = nil, occurredAt: Date = Date(), app: String? = nil,
                id: String? = nil) {
        self.id = id ?? Self.newID()
        self.payload = payload
        self.activityID = activityID
        self.bookingID = bookingID
        self.attributesType = attributesType
        self.occurredAt = occurredAt
        self.app = app
    }

    /// A fresh idempotency key: a version 7 UUID (RFC 9562), the Unix time in milliseconds in
    /// its first 48 bits and the rest random. The monitor indexes event ids: a time-ordered key
    /// is stored beside the last ones, where a random (version 4) one lands anywhere among
    /// them, which costs SQLite over twice the work per event in a large store
    /// (`Tests/bench/PERFORMANCE.md`, session 31).
    public static func newID(at now: Date = Date()) -> String {
        var id = UUID().uuid
        let milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        withUnsafeMutableBytes(of: &id) { bytes in
            for i in 0..<6 { bytes[i] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * i)) }
            bytes[6] = 0x70 | bytes[6] & 0x0F   // version 7
            bytes[8] = 0x80 | bytes[8] & 0x3F   // the RFC's variant
        }
        return UUID(uuid: id).uuidString.lowercased()
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, type
        case activityID = "activity_id"
        case bookingID = "booking_id"
        case attributesType = "attributes_type"
        case occurredAt = "occurred_at"
        case app
    }

    /// The common fields, then the type's own fields into the same JSON object. Throws
    /// `EncodingError.invalidValue` for a channel management result that names an activity,
    /// booking or attributes type: the monitor would refuse it (and the rest of its batch with
    /// it, until resent), so the reporter rejects it on `report` instead.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !kind.namesActivity {
            let named = [(activityID, CodingKeys.activityID), (bookingID, .bookingID), (attributesType, .attributesType)]
                .compactMap { $0.0 == nil ? nil : $0.1 }
            if let first = named.first {
                throw EncodingError.invalidValue(self, EncodingError.Context(
                    codingPath: [first],
                    debugDescription: "a \(kind.rawValue) event names a channel, not an activity: "
                        + named.map(\.stringValue).joined(separator: ", ") + " must be nil"))
            }
        }
        try container.encode(id, forKey: .id)
        try container.encode(kind.rawValue, forKey: .type)
        try container.encodeIfPresent(activityID, forKey: .activityID)
        try container.encodeIfPresent(bookingID, forKey: .bookingID)
        try container.encodeIfPresent(attributesType, forKey: .attributesType)
        try container.encode(occurredAt, forKey: .occurredAt)
        try container.encodeIfPresent(app, forKey: .app)
        switch payload {
        case .started(let fields): try fields.encode(to: encoder)
        case .updated(let fields): try fields.encode(to: encoder)
        case .tokenUpdated(let fields): try fields.encode(to: encoder)
        case .ended(let fields): try fields.encode(to: encoder)
        case .pushSent(let fields): try fields.encode(to: encoder)
        case .observed(let fields): try fields.encode(to: encoder)
        case .pushToStartToken(let fields): try fields.encode(to: encoder)
        case .channelCreated(let fields): try fields.encode(to: encoder)
        case .channelDeleted(let fields): try fields.encode(to: encoder)
        case .stale, .dismissed: break
        }
    }

    /// The JSON the reporter sends: keys sorted, dates as RFC 3339 UTC.
    public func jsonData() throws -> Data {
        try Self.makeEncoder().encode(self)
    }

    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = WireDate.strategy
        return encoder
    }

    /// The wire names of the envelope's fields an event of `kind` may carry: all of them on
    /// the types about activities; on the channel management results, all but `activity_id`,
    /// `booking_id` and `attributes_type`.
    static func commonFieldNames(of kind: Kind) -> [String] {
        CodingKeys.allCases.filter { key in
            kind.namesActivity || ![CodingKeys.activityID, .bookingID, .attributesType].contains(key)
        }.map(\.stringValue)
    }

    /// The wire names of the fields a type adds to the common ones.
    static func fieldNames(of kind: Kind) -> [String] {
        switch kind {
        case .activityStarted: ActivityStarted.fieldNames
        case .activityUpdated: ActivityUpdated.fieldNames
        case .activityTokenUpdated: ActivityTokenUpdated.fieldNames
        case .activityEnded: ActivityEnded.fieldNames
        case .pushSent: PushSent.fieldNames
        case .activityObserved: ActivityObserved.fieldNames
        case .devicePushToStartToken: DevicePushToStartToken.fieldNames
        case .channelCreated: ChannelCreated.fieldNames
        case .channelDeleted: ChannelDeleted.fieldNames
        case .activityStale, .activityDismissed: []
        }
    }
}

extension LiveActivityEvent {
    /// `activity.started`: the app requested an activity.
    public static func started(activityID: String, bookingID: String, attributesType: String,
                               _ fields: ActivityStarted, occurredAt: Date = Date(), app: String? = nil,
                               id: String? = nil) -> LiveActivityEvent {
        LiveActivityEvent(.started(fields), activityID: activityID, bookingID: bookingID,
                          attributesType: attributesType, occurredAt: occurredAt, app: app, id: id)
    }

    /// `activity.updated`: the app changed the content itself.
    public static func updated(activityID: String, _ fields: ActivityUpdated, occurredAt: Date = Date(),
                               app: String? = nil, id: String? = nil) -> LiveActivityEvent {
        LiveActivityEvent(.updated(fields), activityID: activityID, occurredAt: occurredAt, app: app, id: id)
    }

    /// `activity.token_updated`: a new update token; send it before any push to it.
    public static func tokenUpdated(activityID: String, pushToken: PushToken, occurredAt: Date = Date(),
                                    app: String? = nil, id: String? = nil) -> LiveActivityEvent {
        LiveActivityEvent(.tokenUpdated(ActivityTokenUpdated(pushToken: pushToken)), activityID: activityID,
                          occurredAt: occurredAt, app: app, id: id)
    }

    /// `activity.stale`: ActivityKit reported the activity stale.
    public static func stale(activityID: String, occurredAt: Date = Date(), app: String? = nil,
                             id: String? = nil) -> LiveActivityEvent {
        LiveActivityEvent(.stale, activityID: activityID, occurredAt: occurredAt, app: app, id: id)
    }

    /// `activity.ended`: the activity ended; it stays visible until dismissed.
    public static func ended(activityID: String, _ fields: ActivityEnded = ActivityEnded(),
                             occurredAt: Date = Date(), app: String? = nil, id: String? = nil) -> LiveActivityEvent {
        LiveActivityEvent(.ended(fields), activityID: activityID, occurredAt: occurredAt, app: app, id: id)
    }

    /// `activity.dismissed`: the activity left the lock screen.
    public static func dismissed(activityID: String, occurredAt: Date = Date(), app: String? = nil,
                                 id: String? = nil) -> LiveActivityEvent {
        LiveActivityEvent(.dismissed, activityID: activityID, occurredAt: occurredAt, app: app, id: id)
    }

    /// `push.sent`: one APNs request and its answer. `activityID` may be nil only for a
    /// push-to-start (`event: start`), which then needs `bookingID` and `attributesType`.
    public static func pushSent(activityID: String?, _ fields: PushSent, bookingID: String? = nil,
                                attributesType: String? = nil, occurredAt: Date = Date(), app: String? = nil,
                                id: String? = nil) -> LiveActivityEvent {
        LiveActivityEvent(.pushSent(fields), activityID: activityID, bookingID: bookingID,
                          attributesType: attributesType, occurredAt: occurredAt, app: app, id: id)
    }

    /// `activity.observed`: what ActivityKit reports the activity shows now (evidence of which
    /// pushes the phone displayed).
    public static func observed(activityID: String, _ fields: ActivityObserved, occurredAt: Date = Date(),
                                app: String? = nil, id: String? = nil) -> LiveActivityEvent {
        LiveActivityEvent(.observed(fields), activityID: activityID, occurredAt: occurredAt, app: app, id: id)
    }

    /// `device.push_to_start_token`: the device's (new) push-to-start token for `attributesType`.
    public static func pushToStartToken(deviceID: String, attributesType: String, pushToken: PushToken,
                                        occurredAt: Date = Date(), app: String? = nil,
                                        id: String? = nil) -> LiveActivityEvent {
        LiveActivityEvent(.pushToStartToken(DevicePushToStartToken(deviceID: deviceID, pushToken: pushToken)),
                          activityID: nil, attributesType: attributesType, occurredAt: occurredAt, app: app, id: id)
    }

    /// `channel.created`: the backend's request to create a broadcast channel, and APNs' answer
    /// (see `channelCreated(requestBody:…)` to build it from the request). No activity,
    /// booking or attributes type: a channel is not an activity's.
    public static func channelCreated(_ fields: ChannelCreated, occurredAt: Date = Date(), app: String? = nil,
                                      id: String? = nil) -> LiveActivityEvent {
        LiveActivityEvent(.channelCreated(fields), activityID: nil, occurredAt: occurredAt, app: app, id: id)
    }

    /// `channel.deleted`: the backend's request to delete a broadcast channel, and APNs' answer.
    /// No activity, booking or attributes type.
    public static func channelDeleted(_ fields: ChannelDeleted, occurredAt: Date = Date(), app: String? = nil,
                                      id: String? = nil) -> LiveActivityEvent {
        LiveActivityEvent(.channelDeleted(fields), activityID: nil, occurredAt: occurredAt, app: app, id: id)
    }
}
