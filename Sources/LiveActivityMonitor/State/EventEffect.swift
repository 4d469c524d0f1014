/// What one event did to the lock screen (DESIGN.md section 4): `applied`, or `no_effect` with
/// why, and the warnings it raised either way. The state engine returns it for every event it
/// applies; the counters are moved from it (`MonitorCounters.count(_:of:)`) and the read API
/// shows it per event, from a replay through the same engine (`HistoryReplay`).
public struct EventEffect: Sendable, Hashable {
    /// Why an event changed nothing; nil when it was applied.
    public var why: Why?
    public var warnings: [Warning]
    /// Why, in words, where the `why` alone does not say it: what would not decode in an
    /// `undecodable_content` push ("`rating`: number where the app sends a string").
    public var detail: String?
    /// For an applied 200 push that brought content: what the phone's observations showed of it
    /// (nil until one does).
    public var delivery: Delivery?
    /// From the push to the observation that confirmed it.
    public var deliverySeconds: Double?
    /// For a 200 start push: whether its activity started (`waiting` until it does or its
    /// window passes).
    public var start: StartOutcome?

    public init(why: Why? = nil, warnings: [Warning] = [], detail: String? = nil) {
        self.why = why
        self.warnings = warnings
        self.detail = detail
    }

    /// Delivery evidence (DESIGN.md section 4): an observation showed the push's content (or a
    /// newer one), or still showed older content once the grace had passed.
    public enum Delivery: String, Sendable, CaseIterable {
        case confirmed, missed
    }

    /// The push-to-start funnel (DESIGN.md section 4).
    public enum StartOutcome: String, Sendable, CaseIterable {
        case started
        case notStarted = "not_started"
        case waiting
    }

    public static let applied = EventEffect()

    public static func noEffect(_ why: Why) -> EventEffect {
        EventEffect(why: why)
    }

    public enum Result: String, Sendable {
        case applied
        case noEffect = "no_effect"
    }

    public var result: Result { why == nil ? .applied : .noEffect }

    public enum Why: String, Sendable, CaseIterable {
        /// An update not newer (by its `timestamp`) than the content shown.
        case outOfOrder = "out_of_order"
        /// Sent to, or reporting, a token that a later rotation replaced.
        case supersededToken = "superseded_token"
        case ended
        case dismissed
        /// No activity with this id was started (yet).
        case unknownActivity = "unknown_activity"
        /// A content-state the app's `Codable` type would not decode (a key missing, or of
        /// another JSON kind than the type's content shape): the phone drops the push.
        case undecodableContent = "undecodable_content"
        /// APNs did not answer 200: nothing reached the phone (for a channel request: not 2xx,
        /// nothing was created or deleted).
        case failed
        /// A 200 broadcast to a channel the backend had reported deleted before it.
        case unknownChannel = "unknown_channel"
        /// An event id already stored: stored once, applied once (the store finds these; the
        /// engine never sees them).
        case duplicate
    }

    /// Something strange but possible about an event, shown with it and counted. Named in
    /// camel case; the wire name is its snake case (`timestampInFuture` reads
    /// `timestamp_in_future`), so that adding one is adding its case (DESIGN.md section 4).
    public enum Warning: Sendable, Hashable, CaseIterable {
        /// `occurred_at` more than 5 minutes after the server received it: it takes effect at
        /// its receipt (`StateEngine.effectiveTime`), so that no gauge counts it for years.
        case occurredAtInFuture
        /// An end or dismissal dated before the activity's start: it takes effect at the start.
        case endedBeforeStart
        /// A `timestamp` more than a day after `occurred_at` (milliseconds, a clock bug): the
        /// phone compares it as a number, so it is modelled as sent.
        case timestampInFuture
        /// A `timestamp` more than a day before `occurred_at`.
        case timestampInPast
        /// A `stale_date` before the event's `occurred_at`: the content is stale on arrival.
        case staleDateInPast
        /// A `dismissal_date` more than 4 hours after the end: the phone removes the card at 4 hours.
        case dismissalDateBeyond4h
        /// A push's `payload_bytes` over APNs' 4096.
        case payloadTooLarge
        /// A push-to-start without an `alert`: ActivityKit requires one to start the activity.
        case startWithoutAlert
        /// A push's `status` or `reason` outside the known APNs answers (DESIGN.md section 2).
        case unknownReason
        /// Priority 1 on a push to a token: APNs takes it only for a broadcast.
        case priority1OnToken
        /// A broadcast with an `expiration` other than 0 to a channel created to keep no message.
        case expirationOnNoStorageChannel

        /// Looked up, not derived each time: the writer counts every warned event by name, and
        /// deriving it (`String(describing:)`, a Unicode property per character) was half of
        /// its CPU per event when every event of a load was warned.
        public var name: String { Self.names[self]! }

        private static let names = Dictionary(uniqueKeysWithValues: allCases.map { ($0, spelled[$0] ?? snakeCase($0)) })
        /// Names whose digits belong to the word before them.
        private static let spelled: [Warning: String] = [.priority1OnToken: "priority1_on_token"]

        private static func snakeCase(_ warning: Warning) -> String {
            var out = ""
            var previous: Character = "_"
            for c in String(describing: warning) {
                // A digit run is a word of its own (`dismissalDateBeyond4h`: `beyond_4h`).
                if c.isUppercase || (c.isNumber && !previous.isNumber) { out += "_" + c.lowercased() } else { out.append(c) }
                previous = c
            }
            return out
        }
    }
}
