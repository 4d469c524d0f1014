import LiveActivityWire

/// What is wrong with a live activity now, as on-call sorts it (`GET /api/triage`, the
/// dashboard's "Needs a look"). The rules are here once; the page shows what they found.
enum TriageProblem: String, CaseIterable, Sendable {
    /// A 200 start push that no activity followed within `--start-window` (in the last day): a
    /// booking, not an activity.
    case startNotStarted = "start_not_started"
    /// The latest push carried content the phone could not decode, and nothing newer replaced
    /// the card's content since: it shows older content than the backend thinks.
    case undecodablePush = "undecodable_push"
    /// The phone's own report showed a push APNs accepted never reached the lock screen.
    case missedDelivery = "missed_delivery"
    /// The content shown has a timestamp more than a day ahead (usually milliseconds): the phone
    /// ignores every correct update until the activity ends.
    case futureTimestamp = "future_timestamp"
    /// APNs said the activity's token is dead (410, BadDeviceToken, …): no push reaches it.
    case tokenInvalidated = "token_invalidated"
    /// The last push was not answered 200 (and did not invalidate the token).
    case lastPushFailed = "last_push_failed"
    /// More priority-10 pushes in the last hour than `--priority10-budget`: iOS throttles it.
    case priority10Heavy = "priority10_heavy"
    case stale

    /// The group's heading, one activity or many.
    var title: (one: String, many: String) {
        switch self {
        case .startNotStarted: ("start push that started nothing", "start pushes that started nothing")
        case .undecodablePush: ("push the phone cannot decode", "pushes the phone cannot decode")
        case .missedDelivery: ("missed delivery", "missed deliveries")
        case .futureTimestamp: ("card frozen by a timestamp in the future", "cards frozen by a timestamp in the future")
        case .tokenInvalidated: ("token invalidated by APNs", "tokens invalidated by APNs")
        case .lastPushFailed: ("last push failed", "last pushes failed")
        case .priority10Heavy: ("over the priority-10 budget", "over the priority-10 budget")
        case .stale: ("stale", "stale")
        }
    }

    /// The content timestamp beyond which a card counts as frozen: the `timestamp_in_future`
    /// warning's day.
    static let frozenAfter = StateEngine.timestampSlack

    /// Until when `record`'s content timestamp freezes its card: a day before it. Stated once, as
    /// an instant, so that the instant time alone clears the problem (`nextChange`) is exactly
    /// the one `of` compares with.
    static func frozenUntil(_ record: borrowing ActivityRecord) -> Double {
        record.contentTimestamp - frozenAfter
    }

    /// Its place in `allCases` (a bit of `TriageIndex.Place.problems`). A `switch`, not a search
    /// of `allCases`: the rules (`bits`) read it with a record borrowed in place, and a call the
    /// optimizer cannot see through there (a global's first use, `==` on these cases) makes it
    /// copy the whole record first. A case added is a compile error here.
    var index: Int {
        switch self {
        case .startNotStarted: 0
        case .undecodablePush: 1
        case .missedDelivery: 2
        case .futureTimestamp: 3
        case .tokenInvalidated: 4
        case .lastPushFailed: 5
        case .priority10Heavy: 6
        case .stale: 7
        }
    }

    /// The problems of `record` at `now`, in the order above; none for an activity that left
    /// the lock screen. (`startNotStarted` belongs to start pushes: `unstarted(_:at:)`.)
    static func of(_ record: borrowing ActivityRecord, at now: Double, priority10Budget: Int) -> [TriageProblem] {
        let found = bits(of: record, at: now, priority10Budget: priority10Budget)
        return found == 0 ? [] : allCases.filter { found & $0.bit != 0 }
    }

    /// The rule of `of`, as a bit (`bit`) per problem: no array made, so that the triage sets
    /// (`TriageIndex.Place`) judge a million records cheaply at start-up.
    static func bits(of record: borrowing ActivityRecord, at now: Double, priority10Budget: Int) -> UInt16 {
        let state = record.state(at: now)
        guard state != .dismissed else { return 0 }
        var found: UInt16 = 0
        if record.undecodable != nil { found |= undecodablePush.bit }
        if record.delivery.missed > 0 { found |= missedDelivery.bit }
        if state != .ended, now < frozenUntil(record) { found |= futureTimestamp.bit }
        if record.tokenInvalidated { found |= tokenInvalidated.bit }
        if let status = record.lastPush?.status, status != 200, !record.tokenInvalidated { found |= lastPushFailed.bit }
        if record.isPriority10Heavy(at: now, budget: priority10Budget) { found |= priority10Heavy.bit }
        if state == .stale { found |= stale.bit }
        return found
    }

    /// Its bit in `bits(of:at:priority10Budget:)` and `TriageIndex.Place.problems`: 1 << `index`.
    var bit: UInt16 { 1 << index }

    /// The first instant after `now` at which `of` may change by time alone that the gauges'
    /// own (`ActivityGauges.nextChange`: every instant `state(at:)` compares the time with, and
    /// each minute while over the priority-10 budget) does not hold: the end of a frozen card's
    /// freeze. Nil for a record not frozen at `now`: time only ever clears that problem.
    static func nextChange(of record: borrowing ActivityRecord, after now: Double) -> Double? {
        let until = frozenUntil(record)
        guard until.isFinite, now < until else { return nil }
        let state = record.state(at: now)
        return state == .ended || state == .dismissed ? nil : until
    }

    /// One line about `record` for this problem, for the row that names it.
    func detail(_ record: ActivityRecord, at now: Double, priority10Budget: Int) -> String {
        switch self {
        case .startNotStarted:
            ""  // a start push's, not an activity's: `detail(unstarted:)`
        case .undecodablePush:
            record.undecodable.map { "pushed \(RFC3339.format($0.at)): " + $0.detail } ?? ""
        case .missedDelivery:
            "\(record.delivery.missed) push\(record.delivery.missed == 1 ? "" : "es") APNs accepted not shown on the phone"
        case .futureTimestamp:
            // A timestamp in milliseconds has no RFC 3339 form: shown as the number it was sent as.
            "content timestamp \(RFC3339.text(record.contentTimestamp))"
                + ": later updates are ignored"
        case .tokenInvalidated:
            "APNs answered \(record.tokenInvalidReason ?? "410")"
        case .lastPushFailed:
            "APNs answered \(record.lastPush.map { "\($0.status)" + ($0.reason.map { " \($0)" } ?? "") } ?? "?")"
        case .priority10Heavy:
            "\(record.priority10Count(at: now)) priority-10 pushes in the last hour (budget \(priority10Budget))"
        case .stale:
            record.staleDate.map { "stale since \(RFC3339.format($0))" } ?? "reported stale by the device"
        }
    }

    /// The start pushes of `unstarted` (oldest first) whose window ended in the last day at `now`.
    static func unstarted(_ unstarted: [PushToStartBook.Pending], at now: Double) -> [PushToStartBook.Pending] {
        unstarted.filter { $0.deadline > now - PushToStartBook.unstartedKept && $0.deadline <= now }
    }

    /// The words for a start push that started nothing.
    static func detail(unstarted p: PushToStartBook.Pending) -> String {
        "start push at \(RFC3339.format(p.sentAt)) started nothing within \(EventEffect.duration(p.deadline - p.sentAt))"
    }
}
