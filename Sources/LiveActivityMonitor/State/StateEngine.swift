import JSON

/// The lock-screen rules (DESIGN.md sections 2 and 4) as transitions of one `ActivityRecord`:
/// applying an event, and letting time pass. Every change a metric counts is counted here,
/// exactly once, so the counters follow the state and nothing else.
public struct StateEngine: Sendable {
    typealias M = MonitorMetrics

    public init() {}

    /// Applies one newly stored event. `record` is the activity as known before it (nil when
    /// the activity was never started); after the call it is the activity as known after it.
    /// The push families go to `pushes`, which the caller adds to `counters` once per batch.
    func apply(_ event: Event, to record: inout ActivityRecord?, counters: inout MonitorCounters,
               pushes: inout PushTally, labels: inout AttributesTypeLabels) {
        let t = event.occurredAt
        if record != nil { advance(&record!, to: t, counters: &counters, labels: labels) }

        switch event.type {
        case .activityStarted:
            start(event, source: event.source, record: &record, counters: &counters, labels: &labels)
        case .pushSent:
            applyPush(event, record: &record, counters: &counters, pushes: &pushes, labels: &labels)
        case .activityUpdated:
            guard record?.isEnded(at: t) == false else { return }
            applyContent(event, to: &record!)
        case .activityTokenUpdated:
            guard var r = record, let fingerprint = event.tokenFingerprint, fingerprint != r.tokenFingerprint else { return }
            if r.tokenFingerprint != nil {
                r.tokenRotations += 1
                counters.inc(M.tokenRotations, labels.label(for: r.attributesType))
                // A rotation reported after a later one: it happened, but its token is already
                // superseded (the newest rotation names the current token).
                if let rotatedAt = r.tokenRotatedAt, t < rotatedAt {
                    record = r
                    return
                }
                r.tokenRotatedAt = t
            }
            r.tokenFingerprint = fingerprint
            r.tokenInvalidReason = nil
            record = r
        case .activityStale:
            // Stale "until a newer update": a report older than the content shown (one that
            // arrived after that content) is about content the phone no longer shows.
            guard var r = record, !r.isEnded(at: t), !r.reportedStale, t >= r.contentTimestamp else { return }
            r.reportedStale = true
            if !r.staleCounted {
                r.staleCounted = true
                counters.inc(M.staleTransitions, labels.label(for: r.attributesType))
            }
            record = r
        case .activityEnded:
            guard var r = record else { return }
            if !r.isEnded(at: t) {
                if let content = event.contentState, event.timestamp > r.contentTimestamp {
                    r.contentState = content
                    r.contentTimestamp = event.timestamp
                }
                end(&r, at: t, by: .app, policy: event.dismissalPolicy, dismissalDate: event.dismissalDate,
                    counters: &counters, labels: labels)
            }
            advance(&r, to: t, counters: &counters, labels: labels)
            record = r
        case .activityDismissed:
            guard var r = record else { return }
            if !r.isEnded(at: t) {
                end(&r, at: t, by: .app, policy: .immediate, dismissalDate: nil, counters: &counters, labels: labels)
            }
            if r.dismissedAt == nil {
                r.dismissedAt = t
                counters.inc(M.dismissed, labels.label(for: r.attributesType))
            }
            record = r
        }
    }

    /// Lets time pass up to `time`: the system end at 8 h, removal from the lock screen, the
    /// stale date. Moving backwards changes nothing.
    public func advance(_ record: inout ActivityRecord, to time: Double,
                        counters: inout MonitorCounters, labels: AttributesTypeLabels) {
        let type = labels.label(for: record.attributesType)
        if !record.staleCounted, !record.reportedStale, let staleDate = record.staleDate,
           staleDate <= time, staleDate < (record.endedAt ?? record.systemEndAt) {
            record.staleCounted = true
            counters.inc(M.staleTransitions, type)
        }
        if record.endedAt == nil, time >= record.systemEndAt {
            record.endedAt = record.systemEndAt
            record.endedBy = .system
            counters.inc(M.ended, type, EndedBy.system.rawValue)
        }
        if record.dismissedAt == nil, let until = record.visibleUntil, time >= until {
            record.dismissedAt = until
            counters.inc(M.dismissed, type)
        }
    }

    private func start(_ event: Event, source: StartSource, record: inout ActivityRecord?,
                       counters: inout MonitorCounters, labels: inout AttributesTypeLabels) {
        guard let id = event.activityID, let type = event.attributesType else { return }
        if var existing = record {
            // Already known (a push-to-start came first, or a repeated start): fill gaps only.
            existing.attributes = existing.attributes ?? event.attributes
            existing.tokenFingerprint = existing.tokenFingerprint ?? event.tokenFingerprint
            existing.app = existing.app ?? event.app
            record = existing
            return
        }
        var r = ActivityRecord(activityID: id, bookingID: event.bookingID, attributesType: type,
                               startedAt: event.occurredAt, source: source)
        r.app = event.app
        r.attributes = event.attributes
        r.contentState = event.contentState
        r.contentTimestamp = event.timestamp
        r.staleDate = event.staleDate
        r.relevanceScore = event.relevanceScore
        if event.type == .activityStarted { r.tokenFingerprint = event.tokenFingerprint }
        counters.inc(M.started, labels.admit(type, source: source), source.rawValue)
        record = r
    }

    private func applyPush(_ event: Event, record: inout ActivityRecord?, counters: inout MonitorCounters,
                           pushes: inout PushTally, labels: inout AttributesTypeLabels) {
        guard let push = event.push else { return }
        pushes.count(push)

        // A push-to-start creates the activity, and is then its first push (last push, priority 10).
        if record == nil, push.kind == .start, push.accepted, event.activityID != nil, event.attributesType != nil {
            start(event, source: .pushToStart, record: &record, counters: &counters, labels: &labels)
        }
        guard record != nil else {
            if push.invalidatesToken { counters.inc(M.tokensInvalidated, M.reasonLabel(push.reason)) }
            if push.accepted, push.kind != .start { counters.inc(M.pushesWithoutEffect, M.NoEffect.unknownActivity.rawValue) }
            return
        }
        // Changed in place: a copy of a record (a dozen references) per event showed in profiles.
        applyPush(push, event, to: &record!, counters: &counters, labels: labels)
    }

    private func applyPush(_ push: PushResult, _ event: Event, to r: inout ActivityRecord,
                           counters: inout MonitorCounters, labels: AttributesTypeLabels) {
        let t = event.occurredAt
        // The last push is the latest sent, not the latest reported.
        if t >= r.lastPush?.at ?? -.infinity {
            r.lastPush = .init(status: push.status, reason: push.reason, latencyMs: push.latencyMs, priority: push.priority, at: t)
        }
        if push.priority == 10 { r.priority10.record(t) }
        let toCurrentToken = r.tokenFingerprint == nil || event.tokenFingerprint == r.tokenFingerprint
        if push.invalidatesToken, toCurrentToken, !r.tokenInvalidated {
            r.tokenInvalidReason = push.reason ?? "HTTP \(push.status)"
            counters.inc(M.tokensInvalidated, M.reasonLabel(push.reason))
        }
        guard push.accepted, push.kind != .start else { return }

        let noEffect: M.NoEffect?
        switch r.state(at: t) {
        case .dismissed: noEffect = .dismissed
        case .ended: noEffect = .ended
        default:
            if !toCurrentToken { noEffect = .supersededToken }
            else if push.kind == .update, event.timestamp <= r.contentTimestamp { noEffect = .outOfOrder }
            else { noEffect = nil }
        }
        if let noEffect {
            counters.inc(M.pushesWithoutEffect, noEffect.rawValue)
            return
        }
        if push.kind == .update {
            applyContent(event, to: &r)
        } else {
            if let content = event.contentState, event.timestamp > r.contentTimestamp {
                r.contentState = content
                r.contentTimestamp = event.timestamp
            }
            end(&r, at: t, by: .push, policy: event.dismissalDate == nil ? .default : .after,
                dismissalDate: event.dismissalDate, counters: &counters, labels: labels)
            advance(&r, to: t, counters: &counters, labels: labels)
        }
    }

    /// A newer content replaces the shown one whole, with its stale date; an older one is dropped.
    private func applyContent(_ event: Event, to r: inout ActivityRecord) {
        guard event.timestamp > r.contentTimestamp else { return }
        if let content = event.contentState { r.contentState = content }
        r.contentTimestamp = event.timestamp
        r.staleDate = event.staleDate
        r.reportedStale = false
        r.staleCounted = false
        if let score = event.relevanceScore { r.relevanceScore = score }
    }

    private func end(_ r: inout ActivityRecord, at t: Double, by: EndedBy, policy: DismissalPolicy?,
                     dismissalDate: Double?, counters: inout MonitorCounters, labels: AttributesTypeLabels) {
        // An activity ends once: an end reported late, with a time before the end already
        // recorded (an app end after the system's, a push end after the app's), is not another.
        guard r.endedAt == nil else { return }
        r.endedAt = t
        r.endedBy = by
        r.dismissalPolicy = policy
        r.dismissalDate = dismissalDate
        counters.inc(M.ended, labels.label(for: r.attributesType), by.rawValue)
    }
}
