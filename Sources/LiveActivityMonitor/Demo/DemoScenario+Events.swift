import Foundation
import JSON

/// The ingest events of DESIGN.md section 3, as the app and the backend of the two seed apps
/// report them. Times are Unix seconds rounded to the millisecond.
extension DemoScenario {
    static func time(_ t: Double) -> JSONValue { .number(JSONNumber((t * 1000).rounded() / 1000)) }

    static func object(_ pairs: [(String, JSONValue?)]) -> JSONObject {
        JSONObject(pairs.compactMap { key, value in value.map { (key, $0) } })
    }

    /// Seed 001's content-state: driver, rating (a string in the seed), progress 0…1, ETA in minutes.
    static func rideContent(driver: String, rating: String, progress: Double, eta: Int) -> JSONValue {
        .object(object([("driverName", .string(driver)), ("rating", .string(rating)),
                        ("progress", .number(JSONNumber((progress * 100).rounded() / 100))),
                        ("duration", .number(JSONNumber(eta)))]))
    }

    /// Seed 000's content-state: when the timer (re)started, and when it was paused, if it is.
    /// Its `Date`s as the app's default `Codable` encodes them, and the phone decodes them:
    /// seconds since 2001-01-01 (DESIGN.md section 2), not Unix seconds.
    static func timerContent(startedAt: Double, pausedAt: Double? = nil) -> JSONValue {
        .object(object([("startedAt", codableDate(startedAt)), ("pausedAt", pausedAt.map(codableDate))]))
    }

    /// A Unix time as Swift's default `Codable` writes a `Date`.
    static func codableDate(_ t: Double) -> JSONValue { time(t - Date.timeIntervalBetween1970AndReferenceDate) }

    mutating func common(_ type: String, _ who: DemoIdentity, at t: Double) -> [(String, JSONValue?)] {
        [("id", .string(nextEventID())), ("type", .string(type)), ("activity_id", .string(who.activityID)),
         ("booking_id", .string(who.bookingID)), ("occurred_at", Self.time(t)), ("app", .string(who.app))]
    }

    mutating func started(_ who: DemoIdentity, type: String, at t: Double, content: JSONValue,
                          attributes: JSONValue? = nil, staleDate: Double? = nil, relevance: Double? = nil,
                          token: String? = nil, source: String? = nil) -> JSONObject {
        Self.object(common("activity.started", who, at: t) + [
            ("attributes_type", .string(type)), ("source", source.map(JSONValue.string)),
            ("attributes", attributes), ("content_state", content), ("stale_date", staleDate.map(Self.time)),
            ("relevance_score", relevance.map { .number(JSONNumber($0)) }), ("push_token", token.map(JSONValue.string)),
        ])
    }

    /// What ActivityKit reports the activity shows now (`contentUpdates`).
    mutating func observed(_ who: DemoIdentity, at t: Double, content: JSONValue) -> JSONObject {
        Self.object(common("activity.observed", who, at: t) + [("content_state", content)])
    }

    /// The device's push-to-start token for the ride type (`pushToStartTokenUpdates`): no activity yet.
    mutating func pushToStartToken(_ who: DemoIdentity, device: String, token: String, at t: Double) -> JSONObject {
        Self.object([
            ("id", .string(nextEventID())), ("type", .string("device.push_to_start_token")), ("occurred_at", Self.time(t)),
            ("app", .string(who.app)), ("device_id", .string(device)), ("attributes_type", .string(Self.rideType)),
            ("push_token", .string(token)),
        ])
    }

    mutating func updated(_ who: DemoIdentity, at t: Double, content: JSONValue) -> JSONObject {
        Self.object(common("activity.updated", who, at: t) + [("content_state", content)])
    }

    mutating func tokenUpdated(_ who: DemoIdentity, at t: Double) -> JSONObject {
        Self.object(common("activity.token_updated", who, at: t) + [("push_token", .string(who.token))])
    }

    mutating func reported(_ type: String, _ who: DemoIdentity, at t: Double) -> JSONObject {
        Self.object(common(type, who, at: t))
    }

    mutating func ended(_ who: DemoIdentity, at t: Double, content: JSONValue?, policy: String,
                        dismissalDate: Double? = nil) -> JSONObject {
        Self.object(common("activity.ended", who, at: t) + [
            ("content_state", content), ("dismissal_policy", .string(policy)),
            ("dismissal_date", dismissalDate.map(Self.time)),
        ])
    }

    /// One APNs request and its answer, as the ride app's backend reports it.
    struct Push {
        var event = "update"
        var status = 200
        var reason: String?
        var priority = 5
        var token: String
        var timestamp: Double
        var content: JSONValue?
        var staleDate: Double?
        var dismissalDate: Double?
        var alert: (title: String, body: String)?
        var relevance: Double?
        /// For push-to-start: the activity's attributes.
        var attributes: JSONValue?
        /// Payload beyond the `aps` dictionary (custom keys the backend adds).
        var extraPayloadBytes = 0
    }

    /// A `push.sent` event; latency and payload size are drawn or computed here.
    mutating func push(_ who: DemoIdentity, at t: Double, _ p: Push, includeActivityID: Bool = true) -> JSONObject {
        let latency: Double
        switch p.status {
        case 0: latency = 10_000
        case 200 where random.chance(0.02): latency = random.double(800...3000)
        case 200: latency = min(random.logNormal(median: 45, sigma: 0.6), 5000)
        case 429: latency = random.double(15...60)
        case 500...: latency = random.double(150...1500)
        default: latency = random.double(8...40)
        }
        var fields = common("push.sent", who, at: t)
        if !includeActivityID { fields.removeAll { $0.0 == "activity_id" } }
        fields += [
            ("attributes_type", p.attributes == nil ? nil : .string(Self.rideType)),
            ("event", .string(p.event)), ("priority", .number(JSONNumber(p.priority))),
            ("status", .number(JSONNumber(p.status))), ("reason", p.reason.map(JSONValue.string)),
            ("latency_ms", .number(JSONNumber((latency * 10).rounded() / 10))),
            ("push_token", .string(p.token)), ("apns_id", .string(ids.uuid())),
            ("payload_bytes", .number(JSONNumber(Self.payloadBytes(p)))),
            ("timestamp", Self.time(p.timestamp)), ("content_state", p.content),
            ("stale_date", p.staleDate.map(Self.time)), ("dismissal_date", p.dismissalDate.map(Self.time)),
            ("relevance_score", p.relevance.map { .number(JSONNumber($0)) }),
            ("alert", p.alert.map { .object(Self.object([("title", .string($0.title)), ("body", .string($0.body))])) }),
            ("attributes", p.attributes),
        ]
        return Self.object(fields)
    }

    /// The size of the APNs payload this push would have had (what `payload_bytes` reports).
    static func payloadBytes(_ p: Push) -> Int {
        let aps = object([
            ("timestamp", .number(JSONNumber(Int(p.timestamp)))), ("event", .string(p.event)),
            ("content-state", p.content), ("stale-date", p.staleDate.map { .number(JSONNumber(Int($0))) }),
            ("dismissal-date", p.dismissalDate.map { .number(JSONNumber(Int($0))) }),
            ("relevance-score", p.relevance.map { .number(JSONNumber($0)) }),
            ("alert", p.alert.map { .object(object([("title", .string($0.title)), ("body", .string($0.body))])) }),
            ("attributes-type", p.attributes == nil ? nil : .string(rideType)), ("attributes", p.attributes),
        ])
        return JSONValue.object(object([("aps", .object(aps))])).jsonString.utf8.count + p.extraPayloadBytes
    }
}
