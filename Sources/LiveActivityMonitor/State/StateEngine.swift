import JSON
import LiveActivityWire
import Prometheus

/// The lock-screen rules (DESIGN.md sections 2 and 4) as transitions of one `ActivityRecord`:
/// applying an event, and letting time pass. Applying an event returns its effect; every state
/// change a metric counts (a start, an end, a rotation…) is counted here, exactly once, so the
/// counters follow the state and nothing else. The counters that follow an effect are moved
/// from it by the caller (`MonitorCounters.count(_:of:)`), never by testing its conditions again.
public struct StateEngine: Sendable {
    typealias M = MonitorMetrics

    let settings: EngineSettings

    public init(settings: EngineSettings = EngineSettings()) {
        self.settings = settings
    }

    /// What applying one event did: its effect, and what time changed on the way (the activity
    /// is brought to the event's time first, and an end may take it off the lock screen at once).
    struct Outcome {
        var effect: EventEffect
        var passed: [TimeTransition] = []
        /// When the event took effect (`effectiveTime`, or the start for an end dated before it).
        var at: Double
        /// Verdicts this event (or the time it was stored at) gave earlier events.
        var verdicts: [Verdict] = []
    }

    /// A verdict on an earlier event, given later: delivery evidence on a push, the outcome of a
    /// start push. The counters move with it; the replay adds it to that event's effect.
    struct Verdict: Equatable {
        enum Kind: Equatable {
            case delivery(EventEffect.Delivery)
            case start(EventEffect.StartOutcome)
        }
        var seq: Int64
        var kind: Kind
        /// `delivery_seconds`, or the time from a start push to its activity.
        var seconds: Double?

        /// Adds itself to the effect of the event it judges.
        func amend(_ effect: inout EventEffect) {
            switch kind {
            case .delivery(let delivery):
                effect.delivery = delivery
                effect.deliverySeconds = seconds
            case .start(let start):
                effect.start = start
            }
        }
    }

    /// An event dated more than this after its receipt takes effect at its receipt.
    static let futureSlack = 300.0
    /// A `timestamp` further than this from `occurred_at` is worth a warning.
    static let timestampSlack = 86_400.0

    /// When an event dated `occurredAt`, received at `receivedAt`, takes effect: as dated,
    /// unless that is more than 5 minutes after its receipt (DESIGN.md section 4).
    public static func effectiveTime(occurredAt: Double, receivedAt: Double) -> Double {
        occurredAt > receivedAt + futureSlack ? receivedAt : occurredAt
    }

    /// Applies one newly stored event, received at `receivedAt`. `record` is the activity as
    /// known before it (nil when the activity was never started); after the call it is the
    /// activity as known after it. The push families go to `pushes`, which the caller adds to
    /// `counters` once per batch. Strange values are applied as the rules of section 4 say (a
    /// timestamp in milliseconds is the newest there is), and named in the effect's warnings.
    /// App-reported content teaches `shapes` its type's content shape; a push whose content
    /// would not decode by it is `undecodable_content`.
    /// `seq` is the event's place in the log (verdicts name it); `starts` the push-to-start
    /// book. Its start windows run out at commit boundaries, not here: the caller lets them run
    /// out at a commit's time before its first event and when it ends (`expireStarts`).
    /// `channels` is the channel book: channel requests change it, broadcasts are judged by it.
    func apply(_ event: Event, seq: Int64, receivedAt: Double, to record: inout ActivityRecord?,
               counters: inout MonitorCounters, pushes: inout PushTally, labels: inout AttributesTypeLabels,
               shapes: inout ContentShapes, starts: inout PushToStartBook, channels: inout ChannelBook) -> Outcome {
        let dating = Self.dating(event, receivedAt: receivedAt, record: record)
        func applied(_ event: borrowing Event) -> Outcome {
            var outcome = apply(event, seq: seq, to: &record, counters: &counters, pushes: &pushes, labels: &labels,
                                shapes: &shapes, starts: &starts, channels: &channels)
            // Most events warn of nothing: their effect's warnings are then the rules' as they are.
            let warnings = dating.warnings + Self.valueWarnings(event)
            if !warnings.isEmpty { outcome.effect.warnings = warnings + outcome.effect.warnings }
            return outcome
        }
        // Nearly every ingested event takes effect as dated and carries its content read: applied
        // as it is. A copy (every field retained, a measurable share of the writer) only for one
        // that moves or was not read where it was decoded (a replay), read once for all its rules.
        let unread = event.contentState != nil && event.contentReading == nil
        guard dating.moves(event) || unread else { return applied(event) }
        var taking = event
        dating.date(&taking)
        if unread { taking.readContent() }
        return applied(taking)
    }

    /// What an event's values (as it takes effect) warn of, besides its dates' distance
    /// (`dating`): strange but possible values, stored as sent (DESIGN.md sections 3 and 4).
    static func valueWarnings(_ event: Event) -> [EventEffect.Warning] {
        var warnings: [EventEffect.Warning] = []
        if let stale = event.staleDate, stale < event.occurredAt { warnings.append(.staleDateInPast) }
        if let dismissal = event.dismissalDate, dismissal > event.occurredAt + LockScreenRules.maxEndedVisibility {
            warnings.append(.dismissalDateBeyond4h)
        }
        if let push = event.push {
            if let bytes = push.payloadBytes, bytes > PushResult.maxPayloadBytes { warnings.append(.payloadTooLarge) }
            if push.kind == .start, !event.hasAlert { warnings.append(.startWithoutAlert) }
            if !push.isKnownAnswer { warnings.append(.unknownReason) }
            if push.priority == 1, !event.isBroadcast { warnings.append(.priority1OnToken) }
        }
        if let request = event.channelRequest, !request.isKnownAnswer { warnings.append(.unknownReason) }
        return warnings
    }

    /// The start pushes whose window has passed at `now`: `not_started`. Called with a commit's
    /// time before its first event and when it ends, by the writer and by every replay alike, so
    /// that a start stored after the window has passed comes too late however the commits fell.
    func expireStarts(_ starts: inout PushToStartBook, at now: Double, counters: inout MonitorCounters) -> [Verdict] {
        guard let earliest = starts.earliestDeadline, earliest <= now else { return [] }
        return starts.takeExpired(at: now).map { p in
            counters.inc(M.pushToStart, EventEffect.StartOutcome.notStarted.rawValue)
            return Verdict(seq: p.seq, kind: .start(.notStarted))
        }
    }

    /// When an event takes effect (`occurredAt`, and a `timestamp` left to default to the
    /// date), and what its dates warn of.
    struct Dating {
        var occurredAt: Double
        var timestamp: Double
        var warnings: [EventEffect.Warning] = []

        /// Whether the event's dates change.
        func moves(_ event: borrowing Event) -> Bool {
            occurredAt != event.occurredAt || timestamp != event.timestamp
        }

        func date(_ event: inout Event) {
            event.occurredAt = occurredAt
            event.timestamp = timestamp
        }
    }

    static func dating(_ event: borrowing Event, receivedAt: Double, record: ActivityRecord?) -> Dating {
        let given = event.occurredAt
        var dating = Dating(occurredAt: given, timestamp: event.timestamp)
        if event.timestamp > given + timestampSlack { dating.warnings.append(.timestampInFuture) }
        if event.timestamp < given - timestampSlack { dating.warnings.append(.timestampInPast) }
        let at = effectiveTime(occurredAt: given, receivedAt: receivedAt)
        if at != given {
            dating.warnings.append(.occurredAtInFuture)
            // A timestamp left to default to the date moves with it.
            if event.timestamp == given { dating.timestamp = at }
            dating.occurredAt = at
        }
        if event.type == .activityEnded || event.type == .activityDismissed, let r = record, dating.occurredAt < r.startedAt {
            dating.warnings.append(.endedBeforeStart)
            dating.occurredAt = r.startedAt
        }
        return dating
    }

    private func apply(_ event: Event, seq: Int64, to record: inout ActivityRecord?, counters: inout MonitorCounters,
                       pushes: inout PushTally, labels: inout AttributesTypeLabels, shapes: inout ContentShapes,
                       starts: inout PushToStartBook, channels: inout ChannelBook) -> Outcome {
        let t = event.occurredAt
        var passed: [TimeTransition] = []
        var verdicts: [Verdict] = []
        if record.isPresent { passed = advance(&record!, to: t, counters: &counters, labels: labels) }

        var effect: EventEffect
        switch event.type {
        case .activityStarted:
            // What the app encoded with its own type: the shape the phone decodes.
            if event.source == .app, event.contentState != nil, let type = event.attributesType {
                shapes.learn(content: event.readContentState?.value, of: type)
            }
            effect = start(event, source: event.source, record: &record, counters: &counters, labels: &labels)
            if event.source == .pushToStart, let booking = event.bookingID, let type = event.attributesType {
                verdicts = started(booking: booking, type: type, at: t, starts: &starts, counters: &counters)
            }
        case .pushSent where event.isBroadcast:
            // The broadcast itself: counted once; each subscriber takes it (`receive`).
            effect = broadcast(event, seq: seq, channels: &channels, counters: &counters)
        case .channelCreated, .channelDeleted:
            effect = channelRequest(event, seq: seq, channels: &channels, counters: &counters)
        case .pushSent:
            if event.push?.kind == .start, event.push?.accepted == true {
                // The funnel's part of a start push, whatever the activity's (DESIGN.md section 4).
                if let fingerprint = event.tokenFingerprint, starts.judgedSuperseded.contains(seq) || starts.isSuperseded(fingerprint) {
                    starts.judge(seq)
                    pushes.count(event.push!)
                    effect = .noEffect(.supersededToken)
                    break
                }
                if let booking = event.bookingID {
                    starts.add(.init(seq: seq, bookingID: booking, attributesType: event.attributesType, sentAt: t,
                                     deadline: t + settings.startWindow))
                }
            }
            effect = applyPush(event, seq: seq, record: &record, counters: &counters, pushes: &pushes, labels: &labels,
                               shapes: shapes, passed: &passed)
            if event.push?.kind == .start, event.push?.accepted == true, event.bookingID != nil { effect.start = .waiting }
        case .activityObserved:
            guard var r = record else { effect = .noEffect(.unknownActivity); break }
            if r.state(at: t) == .dismissed { effect = .noEffect(.dismissed); break }
            // What the app reports it shows was encoded by its own type: the shape the phone decodes.
            if event.contentState != nil { shapes.learn(content: event.readContentState?.value, of: r.attributesType) }
            verdicts = observe(event, on: &r, counters: &counters)
            record = r
            effect = .applied
        case .devicePushToStartToken:
            effect = pushToStartToken(event, starts: &starts, counters: &counters, labels: labels)
        case .activityUpdated:
            guard let r = record else { effect = .noEffect(.unknownActivity); break }
            if let ended = Self.ended(r, at: t) { effect = .noEffect(ended); break }
            effect = applyContent(event, to: &record!)
            if effect.why == nil, event.contentState != nil {
                record!.delivery.remember(digest: event.contentDigest, timestamp: event.timestamp, push: nil)
            }
        case .activityTokenUpdated:
            guard var r = record else { effect = .noEffect(.unknownActivity); break }
            // The same token again confirms the current one.
            guard let fingerprint = event.tokenFingerprint, !r.hasTokenFingerprint(fingerprint) else { effect = .applied; break }
            if r.storedFingerprint != nil {
                r.tokenRotations += 1
                counters.inc(M.tokenRotations, labels.label(for: r.attributesType))
                // A rotation reported after a later one: it happened, but its token is already
                // superseded (the newest rotation names the current token).
                if let rotatedAt = r.tokenRotatedAt, t < rotatedAt {
                    record = r
                    effect = .noEffect(.supersededToken)
                    break
                }
                r.tokenRotatedAt = t
            }
            r.tokenFingerprint = fingerprint
            r.tokenInvalidReason = nil
            record = r
            effect = .applied
        case .activityStale:
            guard var r = record else { effect = .noEffect(.unknownActivity); break }
            if let ended = Self.ended(r, at: t) { effect = .noEffect(ended); break }
            // Stale "until a newer update": a report older than the content shown (one that
            // arrived after that content) is about content the phone no longer shows.
            guard t >= r.contentTimestamp else { effect = .noEffect(.outOfOrder); break }
            effect = .applied
            guard !r.reportedStale else { break }
            r.reportedStale = true
            if !r.staleCounted {
                r.staleCounted = true
                counters.inc(M.staleTransitions, labels.label(for: r.attributesType))
            }
            record = r
        case .activityEnded:
            guard var r = record else { effect = .noEffect(.unknownActivity); break }
            if let ended = Self.ended(r, at: t) {
                effect = .noEffect(ended)
            } else {
                var changed = false
                if let content = event.contentState, event.timestamp > r.contentTimestamp {
                    r.contentState = content
                    r.contentTimestamp = event.timestamp
                    r.delivery.remember(digest: event.contentDigest, timestamp: event.timestamp, push: nil)
                    changed = true
                }
                changed = end(&r, at: t, by: .app, policy: event.dismissalPolicy, dismissalDate: event.dismissalDate,
                              counters: &counters, labels: labels) || changed
                effect = changed ? .applied : .noEffect(.ended)
            }
            passed += advance(&r, to: t, counters: &counters, labels: labels)
            record = r
        case .activityDismissed:
            guard var r = record else { effect = .noEffect(.unknownActivity); break }
            if !r.isEnded(at: t) {
                end(&r, at: t, by: .app, policy: .immediate, dismissalDate: nil, counters: &counters, labels: labels)
            }
            if r.dismissedAt == nil {
                r.dismissedAt = t
                counters.inc(M.dismissed, labels.label(for: r.attributesType))
                effect = .applied
            } else {
                effect = .noEffect(.dismissed)
            }
            record = r
        }
        return Outcome(effect: effect, passed: passed, at: t, verdicts: verdicts)
    }

    /// An `activity.started` from a push-to-start: every start push of its booking and type
    /// still waiting, whose window the start occurred in, is `started` (DESIGN.md section 4).
    private func started(booking: String, type: String, at t: Double, starts: inout PushToStartBook,
                         counters: inout MonitorCounters) -> [Verdict] {
        starts.take(bookingID: booking, type: type, startedAt: t).map { p in
            let seconds = max(0, t - p.sentAt)
            counters.inc(M.pushToStart, EventEffect.StartOutcome.started.rawValue)
            counters.observe(M.pushToStartSeconds, seconds)
            return Verdict(seq: p.seq, kind: .start(.started), seconds: seconds)
        }
    }

    /// What an observation says of the pushes that brought contents (DESIGN.md section 4,
    /// "Delivery evidence"). An observation of a content the server knows is the phone's own
    /// word: the lock screen becomes it, with its timestamp. One of a content never seen
    /// changes nothing.
    private func observe(_ event: Event, on r: inout ActivityRecord, counters: inout MonitorCounters) -> [Verdict] {
        guard let content = event.contentState, let shown = r.delivery.match(digest: event.contentDigest)
        else { return [] }
        let t = event.occurredAt
        let shownTimestamp = r.delivery.known[shown].timestamp
        var verdicts: [Verdict] = []
        for i in r.delivery.known.indices {
            guard let push = r.delivery.known[i].push else { continue }
            if r.delivery.known[i].timestamp <= shownTimestamp {
                // Shown, or superseded by what is shown.
                let seconds = max(0, t - push.sentAt)
                counters.inc(M.pushDeliveries, EventEffect.Delivery.confirmed.rawValue)
                counters.observe(M.pushDeliverySeconds, seconds)
                r.delivery.lastConfirmedAt = max(r.delivery.lastConfirmedAt ?? t, t)
                verdicts.append(Verdict(seq: push.seq, kind: .delivery(.confirmed), seconds: seconds))
            } else if push.sentAt < t - settings.deliveryGrace {
                counters.inc(M.pushDeliveries, EventEffect.Delivery.missed.rawValue)
                r.delivery.missed += 1
                verdicts.append(Verdict(seq: push.seq, kind: .delivery(.missed)))
            } else {
                continue  // still within the grace: a later observation decides
            }
            r.delivery.known[i].push = nil
        }
        // The observation's text is the known content's (equal as canonical JSON).
        if shownTimestamp != r.contentTimestamp || ContentDigest.of(r.contentState) != r.delivery.known[shown].digest {
            r.contentState = content
            r.contentTimestamp = shownTimestamp
        }
        return verdicts
    }

    /// A device's push-to-start token for a type: a newer one supersedes the old (the rotation
    /// is counted); one reported after a newer one is itself superseded.
    private func pushToStartToken(_ event: Event, starts: inout PushToStartBook, counters: inout MonitorCounters,
                                  labels: AttributesTypeLabels) -> EventEffect {
        // The validator requires all three.
        guard let device = event.deviceID, let type = event.attributesType, let fingerprint = event.tokenFingerprint
        else { return .noEffect(.unknownActivity) }
        let key = PushToStartBook.DeviceType(deviceID: ExactString(device), attributesType: ExactString(type))
        let t = event.occurredAt
        guard let current = starts.tokens[key] else {
            starts.setToken(.init(fingerprint: fingerprint, at: t), for: key)
            return .applied
        }
        guard !current.isFingerprint(fingerprint) else { return .applied }
        counters.inc(M.pushToStartTokenRotations, labels.label(for: type))
        if t < current.at {
            starts.supersede(fingerprint)
            return .noEffect(.supersededToken)
        }
        starts.supersede(current.fingerprint)
        starts.setToken(.init(fingerprint: fingerprint, at: t), for: key)
        return .applied
    }

    /// Why a push at `t` comes too late for the activity: it had left the lock screen, or ended.
    private static func over(_ r: ActivityRecord, at t: Double) -> EventEffect.Why? {
        switch r.state(at: t) {
        case .dismissed: .dismissed
        case .ended: .ended
        default: nil
        }
    }

    /// Why a device's report at `t` comes too late: the activity had ended by then (and perhaps
    /// left the lock screen).
    private static func ended(_ r: ActivityRecord, at t: Double) -> EventEffect.Why? {
        guard r.isEnded(at: t) else { return nil }
        return r.state(at: t) == .dismissed ? .dismissed : .ended
    }

    /// Whether `event` may create its activity's record: a start, or an accepted push-to-start
    /// (which may still start nothing). Keep in step with `start` and `applyPush`.
    static func mayStart(_ event: Event) -> Bool {
        event.type == .activityStarted || (event.push?.kind == .start && event.push?.accepted == true)
    }

    /// Whether applying `event` reads the record's texts (a live record may have left them to
    /// its row: `ActivityRecord.textsInRow`): a repeated start fills a missing `attributes`
    /// (`start`), and an observation compares the content shown with its own (`observe`). Every
    /// other rule only sets them. Keep in step with those two.
    static func readsTexts(_ event: Event) -> Bool {
        switch event.type {
        case .activityStarted: true
        case .activityObserved: event.contentState != nil
        default: false
        }
    }

    /// Whether applying `event` reads the delivery evidence's known contents (a live record may
    /// have left them to its row: `DeliveryEvidence.knownInRow`): an observation matches and
    /// settles them (`observe`). Every other rule only appends one (`remember`), which a tail
    /// does as well. Keep in step with `observe`.
    static func readsKnown(_ event: Event) -> Bool {
        event.type == .activityObserved && event.contentState != nil
    }

    /// Lets time pass up to `time`: the system end at 8 h, removal from the lock screen, the
    /// stale date. Moving backwards changes nothing. Returns what changed, oldest first.
    @discardableResult
    public func advance(_ record: inout ActivityRecord, to time: Double,
                        counters: inout MonitorCounters, labels: AttributesTypeLabels) -> [TimeTransition] {
        // The label only when something is counted: this runs for every record a commit holds.
        var type: String { labels.label(for: record.attributesType) }
        var passed: [TimeTransition] = []
        if !record.staleCounted, !record.reportedStale, let staleFrom = record.staleFrom,
           staleFrom <= time, staleFrom < (record.endedAt ?? record.systemEndAt) {
            record.staleCounted = true
            counters.inc(M.staleTransitions, type)
            passed.append(TimeTransition(kind: .stale, at: staleFrom))
        }
        if record.endedAt == nil, time >= record.systemEndAt {
            record.endedAt = record.systemEndAt
            record.endedBy = .system
            counters.inc(M.ended, type, EndedBy.system.rawValue)
            passed.append(TimeTransition(kind: .ended, at: record.systemEndAt))
        }
        if record.dismissedAt == nil, let until = record.visibleUntil, time >= until {
            record.dismissedAt = until
            counters.inc(M.dismissed, type)
            passed.append(TimeTransition(kind: .dismissed, at: until))
        }
        return passed
    }

    private func start(_ event: Event, source: StartSource, record: inout ActivityRecord?,
                       counters: inout MonitorCounters, labels: inout AttributesTypeLabels) -> EventEffect {
        // The validator requires both on a start; a push-to-start is only sent here with both.
        guard let id = event.activityID, let type = event.attributesType else { return .noEffect(.unknownActivity) }
        if var existing = record {
            // Already known (a push-to-start came first, or a repeated start): fill gaps only.
            existing.attributes = existing.attributes ?? event.attributes
            existing.tokenFingerprint = existing.tokenFingerprint ?? event.tokenFingerprint
            if existing.app == nil, let app = event.app { existing.app = app }
            existing.channelID = existing.channelID ?? event.channelID
            record = existing
            return .applied
        }
        var r = ActivityRecord(activityID: id, bookingID: event.bookingID, attributesType: type, app: event.app,
                               startedAt: event.occurredAt, source: source)
        r.attributes = event.attributes
        r.contentState = event.contentState
        r.contentTimestamp = event.timestamp
        r.staleDate = event.staleDate
        r.relevanceScore = event.relevanceScore
        r.startDate = event.startDate
        r.channelID = event.channelID
        if event.type == .activityStarted { r.tokenFingerprint = event.tokenFingerprint }
        if event.contentState != nil {
            r.delivery.remember(digest: event.contentDigest, timestamp: event.timestamp, push: nil)
        }
        counters.inc(M.started, labels.admit(type, source: source), source.rawValue)
        record = r
        return .applied
    }

    private func applyPush(_ event: Event, seq: Int64, record: inout ActivityRecord?, counters: inout MonitorCounters,
                           pushes: inout PushTally, labels: inout AttributesTypeLabels, shapes: ContentShapes,
                           passed: inout [TimeTransition]) -> EventEffect {
        guard let push = event.push else { return .applied }  // the validator gives every push.sent one
        pushes.count(push)

        // A push-to-start whose content the type would not decode starts nothing.
        if !record.isPresent, push.kind == .start, push.accepted, let type = event.attributesType,
           let detail = Self.undecodable(event, as: type, shapes) {
            return EventEffect(why: .undecodableContent, detail: detail)
        }

        // A push-to-start creates the activity, and is then its first push (last push, priority 10).
        if !record.isPresent, push.kind == .start, push.accepted, event.activityID != nil, event.attributesType != nil {
            _ = start(event, source: .pushToStart, record: &record, counters: &counters, labels: &labels)
        }
        guard record.isPresent else {
            if push.invalidatesToken { counters.inc(M.tokensInvalidated, M.reasonLabel(push.reason)) }
            if !push.accepted { return .noEffect(.failed) }
            // A push-to-start may name no activity (DESIGN.md section 3): the activity begins
            // with the `activity.started` the device reports.
            return push.kind == .start ? .applied : .noEffect(.unknownActivity)
        }
        // Changed in place: a copy of a record (a dozen references) per event showed in profiles.
        return applyPush(push, event, seq: seq, to: &record!, counters: &counters, labels: labels, shapes: shapes,
                         passed: &passed)
    }

    /// Why the event's content would not decode as `type`'s content-state, in words: the
    /// verdict stored with it (a replay), else the shapes' (the writer); nil when it would, or
    /// when the event carries no content.
    private static func undecodable(_ event: Event, as type: String, _ shapes: ContentShapes) -> String? {
        guard let content = event.contentState else { return nil }
        return event.contentVerdict ?? shapes.verdict(on: content, of: type)
    }

    private func applyPush(_ push: PushResult, _ event: Event, seq: Int64, to r: inout ActivityRecord,
                           counters: inout MonitorCounters, labels: AttributesTypeLabels, shapes: ContentShapes,
                           passed: inout [TimeTransition]) -> EventEffect {
        let t = event.occurredAt
        // The last push is the latest sent, not the latest reported.
        if t >= r.lastPush?.at ?? -.infinity {
            r.lastPush = .init(status: push.status, reason: push.reason, latencyMs: push.latencyMs, priority: push.priority, at: t)
        }
        if push.priority == 10 { r.priority10.record(t) }
        let toCurrentToken = r.storedFingerprint == nil || r.hasTokenFingerprint(event.tokenFingerprint)
        if push.invalidatesToken, toCurrentToken, !r.tokenInvalidated {
            r.tokenInvalidReason = push.reason ?? "HTTP \(push.status)"
            counters.inc(M.tokensInvalidated, M.reasonLabel(push.reason))
        }
        guard push.accepted else { return .noEffect(.failed) }
        // A start push for an activity already known: it is its first push, nothing more.
        guard push.kind != .start else { return .applied }

        if let over = Self.over(r, at: t) { return .noEffect(over) }
        if !toCurrentToken { return .noEffect(.supersededToken) }
        var content = PushContent()
        return deliver(push, event, seq: seq, to: &r, counters: &counters, labels: labels, shapes: shapes,
                       content: &content, passed: &passed)
    }

    /// A broadcast as such (DESIGN.md sections 2 and 4): counted in the broadcast families,
    /// once whatever the subscribers; applied (to be taken by each subscriber) when APNs took it
    /// and its channel had not been deleted before it; noted as the channel's last broadcast.
    private func broadcast(_ event: Event, seq: Int64, channels: inout ChannelBook,
                           counters: inout MonitorCounters) -> EventEffect {
        // The validator gives every push.sent a push, and a broadcast its channel.
        guard let push = event.push, let channel = event.channelID else { return .applied }
        let priority = String(push.priority)
        counters.inc(M.broadcastPushes, push.kind.rawValue, priority, push.accepted ? "none" : M.reasonLabel(push.reason),
                     M.statusLabel(push.status))
        var latency = HistogramValue(upperBounds: M.broadcastLatency.buckets)
        latency.observe(push.latencyMs / 1000)
        counters.merge(M.broadcastLatency, push.kind.rawValue, priority, histogram: latency)
        let found = channels.judge(broadcastTo: channel, seq: seq, at: event.occurredAt)
        var effect: EventEffect = !push.accepted ? .noEffect(.failed) : found.deleted ? .noEffect(.unknownChannel) : .applied
        if found.keepsNoMessage, let expiration = event.expiration, expiration != 0 {
            effect.warnings.append(.expirationOnNoStorageChannel)
        }
        channels.noteBroadcast(to: channel, .init(seq: seq, at: event.occurredAt, push: push, effect: effect.result,
                                                  why: effect.why))
        return effect
    }

    /// A call to the channel management API: counted by its answer; a 2xx creates or deletes
    /// the channel in the book.
    private func channelRequest(_ event: Event, seq: Int64, channels: inout ChannelBook,
                                counters: inout MonitorCounters) -> EventEffect {
        guard let request = event.channelRequest else { return .applied }  // the validator gives every one
        counters.inc(M.channelRequests, request.operation.rawValue, M.reasonLabel(request.reason),
                     M.channelStatusLabel(request.status))
        guard request.succeeded else { return .noEffect(.failed) }
        if let channel = event.channelID { channels.record(request, channel: channel, seq: seq, at: event.occurredAt) }
        return .applied
    }

    /// One subscriber's part of a 200 broadcast (`event`, stored as `seq`, received at
    /// `receivedAt`): the activity takes it as it would take a push to its own token, by the
    /// newest-timestamp rule; one that had ended or left the lock screen is untouched. Its
    /// effect is that activity's (the broadcast's own is `apply`'s). Called by the writer for
    /// every activity subscribed to the channel, and by the replay for those it holds.
    /// `event` is the broadcast as it takes effect (`receivable`), and `content` its content,
    /// both made once for all its subscribers.
    func receive(_ event: Event, seq: Int64, on r: inout ActivityRecord,
                 counters: inout MonitorCounters, labels: AttributesTypeLabels, shapes: ContentShapes,
                 content: inout PushContent) -> Outcome {
        let t = event.occurredAt
        var passed = advance(&r, to: t, counters: &counters, labels: labels)
        guard let push = event.push, push.accepted, push.kind != .start else {
            return Outcome(effect: .noEffect(.failed), passed: passed, at: t)
        }
        if let over = Self.over(r, at: t) { return Outcome(effect: .noEffect(over), passed: passed, at: t) }
        let effect = deliver(push, event, seq: seq, to: &r, counters: &counters, labels: labels, shapes: shapes,
                             content: &content, passed: &passed)
        return Outcome(effect: effect, passed: passed, at: t)
    }

    /// A broadcast stored at `receivedAt` as its subscribers take it (`dating`: its time does not
    /// depend on the activity), with its content read once.
    static func receivable(_ event: Event, receivedAt: Double) -> (event: Event, content: PushContent) {
        var dated = event
        dating(event, receivedAt: receivedAt, record: nil).date(&dated)
        if dated.contentState != nil, dated.contentReading == nil { dated.readContent() }
        return (dated, PushContent())
    }

    /// What an accepted update or end does to a live activity that receives it (through its
    /// token or a channel).
    private func deliver(_ push: PushResult, _ event: Event, seq: Int64, to r: inout ActivityRecord,
                         counters: inout MonitorCounters, labels: AttributesTypeLabels, shapes: ContentShapes,
                         content: inout PushContent, passed: inout [TimeTransition]) -> EventEffect {
        let t = event.occurredAt
        // The phone decodes the content first: one it cannot read drops the whole push (an end
        // too), whatever its timestamp.
        if let detail = content.verdict(on: event, as: r.attributesType, shapes) {
            if t >= r.undecodable?.at ?? -.infinity { r.undecodable = .init(at: t, detail: detail) }
            return EventEffect(why: .undecodableContent, detail: detail)
        }
        if push.kind == .update {
            let effect = applyContent(event, to: &r)
            if effect.why == nil, event.contentState != nil {
                r.delivery.remember(digest: event.contentDigest, timestamp: event.timestamp, push: (seq, t))
            }
            return effect
        }
        if let text = event.contentState, event.timestamp > r.contentTimestamp {
            r.contentState = text
            r.contentTimestamp = event.timestamp
            r.delivery.remember(digest: event.contentDigest, timestamp: event.timestamp, push: (seq, t))
        }
        end(&r, at: t, by: .push, policy: event.dismissalDate == nil ? .default : .after,
            dismissalDate: event.dismissalDate, counters: &counters, labels: labels)
        passed += advance(&r, to: t, counters: &counters, labels: labels)
        return .applied
    }

    /// A newer content replaces the shown one whole, with its stale date; an older one is dropped.
    private func applyContent(_ event: Event, to r: inout ActivityRecord) -> EventEffect {
        guard event.timestamp > r.contentTimestamp else { return .noEffect(.outOfOrder) }
        if let content = event.contentState { r.contentState = content }
        // Content newer than an undecodable push replaces what that push left on the card.
        if let undecodable = r.undecodable, event.occurredAt >= undecodable.at { r.undecodable = nil }
        r.contentTimestamp = event.timestamp
        r.staleDate = event.staleDate
        r.reportedStale = false
        r.staleCounted = false
        if let score = event.relevanceScore { r.relevanceScore = score }
        return .applied
    }

    /// Ends the activity at `t`; returns whether the end it records changed. An activity ends
    /// once, at its earliest end: an end reported late with a time before the one recorded (the
    /// app's end after the 8-hour end the server inferred while the report was on its way, or a
    /// push's end stored before an earlier app end) replaces it, and so does its dismissal, as a
    /// replay of the events in their order would have it. Counted once, when first learned:
    /// a counter cannot take back the first end's count.
    @discardableResult
    private func end(_ r: inout ActivityRecord, at t: Double, by: EndedBy, policy: DismissalPolicy?,
                     dismissalDate: Double?, counters: inout MonitorCounters, labels: AttributesTypeLabels) -> Bool {
        if let recorded = r.endedAt, recorded <= t { return false }
        let first = r.endedAt == nil
        r.endedAt = t
        r.endedBy = by
        r.dismissalPolicy = policy
        r.dismissalDate = dismissalDate
        if first {
            counters.inc(M.ended, labels.label(for: r.attributesType), by.rawValue)
        } else if let dismissed = r.dismissedAt {
            // Whichever comes first: the dismissal recorded, or the new end's own removal
            // (`visibleUntil` without a dismissal).
            r.dismissedAt = nil
            r.dismissedAt = min(dismissed, r.visibleUntil ?? dismissed)
        }
        return true
    }
}
