import JSON
import LiveActivityWire

/// The current state of one activity: everything the lock screen, the read API and the gauges
/// need, kept in memory for live activities and in the `activities` table for all of them.
public struct ActivityRecord: Sendable, Equatable {
    // Stored in an order that leaves little padding (Swift lays fields out as declared): each
    // id (17 bytes) followed by small fields that fill its last word, then the 8-byte fields,
    // then the others. A `Double?` is kept as an `OptionalTime` (8 bytes, not 16) behind a
    // property of the old type, the fields few set are kept apart (`uncommon`), the last push in
    // parts (`lastPush`), and the type and app and the two texts are blocks of their own
    // (`TypeAndApp`, `HeldTexts`) (docs/ARCHITECTURE.md, "What one record costs").
    public var activityID: String {
        get { id.string }
        set { id = CompactID(newValue) }
    }
    public var bookingID: String? {
        get { booking?.string }
        set { booking = newValue.map(CompactID.init) }
    }
    /// The ids as kept (`CompactID`: a UUID in 17 bytes, not a String and its heap block): the
    /// table's indexes and the orders compare these, without making the text. Each is followed by
    /// small fields that fill its last word.
    var id: CompactID
    public var source: StartSource
    private var pushStatus = LastPush.Stored.none.status
    /// Kept in 4 bytes (a damaged row's count beyond them reads as their largest).
    public var tokenRotations: Int {
        get { Int(storedRotations) }
        set { storedRotations = Int32(clamping: newValue) }
    }
    private var storedRotations: Int32 = 0
    var booking: CompactID?
    /// The device reported `activity.stale` for the content now shown.
    public var reportedStale = false
    private var pushPriority = LastPush.Stored.none.priority
    /// The current stale period was already counted in `liveactivity_stale_transitions_total`.
    public var staleCounted = false
    public var endedBy: EndedBy?
    public var dismissalPolicy: DismissalPolicy?
    /// The texts its row holds and memory let go (after the commit that wrote the row): set
    /// only by `leaveToRow` and the row reader; setting a text takes it back into memory.
    public private(set) var textsInRow: RecordTexts = []
    /// The attributes type and app, in a block records share (`TypeAndApp`).
    public var attributesType: String {
        get { typeAndApp.attributesType }
        set { typeAndApp = TypeAndApp(newValue, app: typeAndApp.app) }
    }
    public var app: String? {
        get { typeAndApp.app }
        set { typeAndApp = TypeAndApp(typeAndApp.attributesType, app: newValue) }
    }
    var typeAndApp: TypeAndApp
    /// As the app gave them (JSON object text). Nil too while only the row holds it
    /// (`textsInRow`): the pages fill it from the row first (`MonitorStore.fillTexts`).
    public var attributes: JSONText? {
        get { held?.attributes }
        set { held = .of(attributes: newValue, contentState: contentState); textsInRow.remove(.attributes) }
    }

    /// What the phone shows: the content with the newest timestamp. Nil too while only the row
    /// holds it, as `attributes`.
    public var contentState: JSONText? {
        get { held?.contentState }
        set { held = .of(attributes: attributes, contentState: newValue); textsInRow.remove(.contentState) }
    }
    /// Both texts, in a block of their own (`HeldTexts`).
    private var held: HeldTexts?

    public var startedAt: Double
    public var contentTimestamp: Double

    @OptionalTime public var staleDate: Double? = nil
    @OptionalTime public var relevanceScore: Double? = nil
    @OptionalTime public var endedAt: Double? = nil
    @OptionalTime public var tokenRotatedAt: Double? = nil
    private var pushLatencyMs = LastPush.Stored.none.latencyMs
    private var pushAt = LastPush.Stored.none.at

    /// The fields most live activities never set (a scheduled start, a channel, a dismissal, an
    /// invalidated token, undecodable content, a refused push's reason), in a block of their own
    /// made only for those that set one: 8 bytes a record instead of 96. An array of none or one, so that the
    /// record keeps its value semantics (copy on write); never one of empty fields, so that
    /// equal records compare equal.
    private var uncommon: [Uncommon] = []

    // From here, the fields not a multiple of 8 bytes that the ids' last words left.

    /// The contents observations are compared with, and what they showed (DESIGN.md section 4)
    /// (21 bytes).
    public var delivery = DeliveryEvidence()
    /// The priority-10 pushes of the last hour, per minute (12 bytes).
    public var priority10 = Priority10Minutes()
    public struct Undecodable: Sendable, Equatable {
        public var at: Double
        public var detail: String
    }

    /// A scheduled start (iOS 26 `start_date`): `pending` until then, its 8 hours counted from it.
    public var startDate: Double? {
        get { uncommon.first?.startDate }
        set { updateUncommon { $0.startDate = newValue } }
    }
    /// The broadcast channel it receives (`activity.started` `channel_id`).
    public var channelID: String? {
        get { uncommon.first?.channelID }
        set { updateUncommon { $0.channelID = newValue } }
    }
    public var dismissalDate: Double? {
        get { uncommon.first?.dismissalDate }
        set { updateUncommon { $0.dismissalDate = newValue } }
    }
    public var dismissedAt: Double? {
        get { uncommon.first?.dismissedAt }
        set { updateUncommon { $0.dismissedAt = newValue } }
    }
    public var tokenInvalidReason: String? {
        get { uncommon.first?.tokenInvalidReason }
        set { updateUncommon { $0.tokenInvalidReason = newValue } }
    }
    /// The latest push whose content the phone could not decode (when it was sent, and why), while
    /// no later content has replaced the card's: the card still shows older content (triage).
    public var undecodable: Undecodable? {
        get { uncommon.first?.undecodable }
        set { updateUncommon { $0.undecodable = newValue } }
    }

    private struct Uncommon: Sendable, Equatable {
        var channelID: String?
        var tokenInvalidReason: String?
        /// The last push's APNs reason (`lastPush`).
        var lastPushReason: String?
        var undecodable: Undecodable?
        @OptionalTime var startDate: Double? = nil
        @OptionalTime var dismissalDate: Double? = nil
        @OptionalTime var dismissedAt: Double? = nil
    }

    private mutating func updateUncommon(_ change: (inout Uncommon) -> Void) {
        if uncommon.isEmpty {
            var fields = Uncommon()
            change(&fields)
            if fields != Uncommon() { uncommon = [fields] }
        } else {
            change(&uncommon[0])
            if uncommon[0] == Uncommon() { uncommon = [] }
        }
    }

    /// The last push result. Kept without its APNs reason in 20 bytes (`LastPush.Stored`, no
    /// optional's tag: `none` stands for nil), as four fields: its two numbers of 2 bytes fill
    /// the ids' last words. A reason comes with a refused push, so it is kept among the uncommon
    /// fields.
    public var lastPush: LastPush? {
        get { storedPush == .none ? nil : LastPush(storedPush, reason: uncommon.first?.lastPushReason) }
        set {
            storedPush = newValue?.stored ?? .none
            if newValue?.reason != uncommon.first?.lastPushReason { updateUncommon { $0.lastPushReason = newValue?.reason } }
        }
    }
    private var storedPush: LastPush.Stored {
        get { LastPush.Stored(latencyMs: pushLatencyMs, at: pushAt, status: pushStatus, priority: pushPriority) }
        set { (pushLatencyMs, pushAt, pushStatus, pushPriority) = (newValue.latencyMs, newValue.at, newValue.status, newValue.priority) }
    }

    /// The latest push result (the read API's `last_push`, triage's "last push failed").
    public struct LastPush: Sendable, Equatable {
        public var status: Int
        public var reason: String?
        public var latencyMs: Double
        public var priority: Int
        public var at: Double

        public init(status: Int, reason: String?, latencyMs: Double, priority: Int, at: Double) {
            self.status = status
            self.reason = reason
            self.latencyMs = latencyMs
            self.priority = priority
            self.at = at
        }

        /// As the record keeps it, less the reason: the status (0–599) and the priority (1, 5
        /// or 10) are validated at ingest, so two bytes each hold them.
        struct Stored: Sendable, Equatable {
            var latencyMs: Double
            var at: Double
            var status: Int16
            var priority: Int16

            /// No push: a status no push has (a damaged row's is clamped above it).
            static let none = Stored(latencyMs: 0, at: 0, status: .min, priority: 0)
        }

        var stored: Stored {
            Stored(latencyMs: latencyMs, at: at, status: Int16(clamping: Swift.max(status, Int(Int16.min) + 1)),
                   priority: Int16(clamping: priority))
        }

        init(_ stored: Stored, reason: String?) {
            self.init(status: Int(stored.status), reason: reason, latencyMs: stored.latencyMs,
                      priority: Int(stored.priority), at: stored.at)
        }
    }

    public var tokenFingerprint: String? {
        get { storedFingerprint?.text }
        set { storedFingerprint = newValue.map(TokenFingerprint.Stored.init) }
    }
    /// As kept (`tokenFingerprint` makes a String of it); set directly by the row reader.
    var storedFingerprint: TokenFingerprint.Stored?

    public init(activityID: String, bookingID: String?, attributesType: String, app: String? = nil,
                startedAt: Double, source: StartSource = .app) {
        self.init(id: CompactID(activityID), booking: bookingID.map(CompactID.init),
                  typeAndApp: TypeAndApp(attributesType, app: app), startedAt: startedAt, source: source)
    }

    init(id: CompactID, booking: CompactID?, typeAndApp: TypeAndApp, startedAt: Double, source: StartSource) {
        self.id = id
        self.booking = booking
        self.typeAndApp = typeAndApp
        self.startedAt = startedAt
        self.source = source
        self.contentTimestamp = startedAt
    }

    public var tokenInvalidated: Bool { tokenInvalidReason != nil }

    /// Lets go of what its row, just committed, holds and only the row needs: both texts and
    /// the delivery evidence's known contents (docs/ARCHITECTURE.md, "What one record costs").
    mutating func leaveToRow() {
        delivery.leaveKnownToRow()
        guard textsInRow != .both else { return }
        held = nil
        textsInRow = .both
    }

    /// Takes back the texts memory let go, as its row holds them (`texts` read from the row); a
    /// text still held is as new as the row's or newer, and stays.
    mutating func fillTexts(attributes: JSONText?, contentState: JSONText?) {
        held = .of(attributes: textsInRow.contains(.attributes) ? attributes : self.attributes,
                   contentState: textsInRow.contains(.contentState) ? contentState : self.contentState)
        textsInRow = []
    }

    /// Whether `fingerprint` is its token's (compared in place: reading `tokenFingerprint`
    /// makes a String, and a push asks this of each event).
    func hasTokenFingerprint(_ fingerprint: String?) -> Bool {
        storedFingerprint == fingerprint.map(TokenFingerprint.Stored.init)
    }

    /// When its life on the lock screen begins: the scheduled start, when later than the start.
    public var liveFrom: Double {
        guard let startDate, startDate > startedAt else { return startedAt }
        return startDate
    }

    /// When its card goes stale: the stale date, but not before it is on the lock screen (a
    /// pending activity whose stale date passed goes stale the moment it starts).
    public var staleFrom: Double? { staleDate.map { max($0, liveFrom) } }

    /// When the system ends it if nothing else does.
    public var systemEndAt: Double { liveFrom + LockScreenRules.maxActiveDuration }

    /// When an ended activity leaves the lock screen: at once for `immediate`, at its dismissal
    /// date if given (held to 4 h after the end and 12 h after the start), else 4 h after the end.
    public var visibleUntil: Double? {
        guard let endedAt else { return nil }
        let latest = min(endedAt + LockScreenRules.maxEndedVisibility, liveFrom + LockScreenRules.maxLifetime)
        if let dismissedAt { return min(dismissedAt, latest) }
        // Matched, not `==`: see `ActivityState.==` (`state(at:)` reads this).
        if case .immediate? = dismissalPolicy { return endedAt }
        if let dismissalDate { return min(dismissalDate, latest) }
        return latest
    }

    /// The state at `now`, by DESIGN.md section 4's order: dismissed, ended, pending (before a
    /// scheduled start: time alone makes it active, no deadline needed), stale, active.
    public func state(at now: Double) -> ActivityState {
        if let dismissedAt, now >= dismissedAt { return .dismissed }
        if isEnded(at: now) {
            let until = visibleUntil ?? (systemEndAt + LockScreenRules.maxEndedVisibility)
            return now >= until ? .dismissed : .ended
        }
        if now < liveFrom { return .pending }
        if reportedStale { return .stale }
        if let staleDate, now >= staleDate { return .stale }
        return .active
    }

    /// Whether it counts in `liveactivity_channel_subscriptions` at `now`: subscribed and live.
    public func isSubscribed(at now: Double) -> Bool {
        guard channelID != nil else { return false }
        let state = state(at: now)
        return state == .pending || state == .active || state == .stale
    }

    public func isEnded(at now: Double) -> Bool {
        if let endedAt, now >= endedAt { return true }
        return now >= systemEndAt
    }

    /// `visible_until` at `now`, including the system end's deadline before it is recorded.
    public func visibleUntil(at now: Double) -> Double? {
        if let visibleUntil { return visibleUntil }
        return now >= systemEndAt ? systemEndAt + LockScreenRules.maxEndedVisibility : nil
    }

    /// Priority-10 pushes sent in the hour before `now` (to the minute).
    public func priority10Count(at now: Double) -> Int {
        priority10.count(at: now)
    }

    /// Whether it counts in `liveactivity_priority10_heavy_activities` at `now`: still live and
    /// sent more priority-10 pushes in the last hour than `budget` (`--priority10-budget`). The
    /// read API states it per activity, so that the dashboard's badge is the gauge's rule.
    public func isPriority10Heavy(at now: Double, budget: Int) -> Bool {
        // The total first: cheaper than the state, and most activities stay far below the budget.
        guard priority10.total > budget else { return false }
        let state = state(at: now)
        return (state == .active || state == .stale) && priority10Count(at: now) > budget
    }

    /// The next instant at which time alone changes this activity's state, if any.
    public var nextDeadline: Double? {
        if dismissedAt != nil { return nil }
        if endedAt != nil { return visibleUntil }
        var next = systemEndAt
        if !staleCounted, !reportedStale, let staleFrom { next = min(next, staleFrom) }
        return next
    }
}
