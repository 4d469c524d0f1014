import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// The state engine called directly: the effect it returns for each rule (DESIGN.md section 4),
/// and the counters moved from those effects in one place.
@Suite struct StateEngineEffectTests {
    static let t0 = TestServer.base
    static let tokenA = "a1a1a1a1a1a1a1a1", tokenB = "b2b2b2b2b2b2b2b2"

    /// One activity's record and the counters, fed event by event as the writer feeds them.
    struct Engine {
        var record: ActivityRecord?
        var counters = MonitorCounters()
        var pushes = PushTally()
        var labels = AttributesTypeLabels()
        var shapes = ContentShapes(judging: true)
        var passed: [TimeTransition] = []
        var starts = PushToStartBook()
        var channels = ChannelBook()
        var seq: Int64 = 0

        /// Applies `event`, received when it occurred unless said, and counts its effect, as
        /// `CommitChanges.apply` does.
        @discardableResult
        mutating func apply(_ event: Event, receivedAt: Double? = nil) -> EventEffect {
            seq += 1
            let outcome = StateEngine().apply(event, seq: seq, receivedAt: receivedAt ?? event.occurredAt, to: &record,
                                              counters: &counters, pushes: &pushes, labels: &labels, shapes: &shapes,
                                              starts: &starts, channels: &channels)
            counters.count(outcome.effect, of: event.type)
            passed += outcome.passed
            return outcome.effect
        }

        func withoutEffect(_ why: String) -> Double {
            counters.value(MonitorMetrics.pushesWithoutEffect, why)
        }
    }

    static func event(_ type: EventType, _ at: Double, activity: String? = "a1", timestamp: Double? = nil,
                      token: String? = nil, content: String? = nil) -> Event {
        var e = Event(type: type, occurredAt: t0 + at)
        e.activityID = activity
        e.timestamp = t0 + (timestamp ?? at)
        e.tokenFingerprint = token
        e.contentState = content.map { JSONText(written: $0) }
        return e
    }

    static func started(_ at: Double = 0, token: String = tokenA, staleDate: Double? = nil) -> Event {
        var e = event(.activityStarted, at, token: token, content: #"{"progress":0.1}"#)
        e.bookingID = "BK-1"
        e.attributesType = "LiveActivityAttributes"
        e.staleDate = staleDate.map { t0 + $0 }
        return e
    }

    static func push(_ kind: PushKind, _ at: Double, status: Int = 200, reason: String? = nil, timestamp: Double? = nil,
                     token: String = tokenA, activity: String? = "a1", priority: Int = 10) -> Event {
        var e = event(.pushSent, at, activity: activity, timestamp: timestamp, token: token,
                      content: #"{"progress":\#(at)}"#)
        e.push = PushResult(kind: kind, status: status, reason: reason, latencyMs: 40, priority: priority)
        return e
    }

    @Test func appliedEventsSayApplied() {
        var engine = Engine()
        #expect(engine.apply(Self.started()) == .applied)
        #expect(engine.apply(Self.push(.update, 60)) == .applied)
        #expect(engine.apply(Self.event(.activityUpdated, 120, content: #"{"progress":0.5}"#)) == .applied)
        #expect(engine.apply(Self.event(.activityTokenUpdated, 180, token: Self.tokenB)) == .applied)
        #expect(engine.apply(Self.event(.activityStale, 200)) == .applied)
        #expect(engine.apply(Self.push(.end, 240, token: Self.tokenB)) == .applied)
        #expect(engine.record?.endedBy == .push)
        #expect(EventEffect.applied.result == .applied && EventEffect.applied.warnings.isEmpty)
        #expect(engine.counters.counters.keys.allSatisfy { $0.family != MonitorMetrics.pushesWithoutEffect.name })
    }

    @Test func anOlderUpdateIsOutOfOrder() {
        var engine = Engine()
        engine.apply(Self.started())
        engine.apply(Self.push(.update, 60))
        let older = engine.apply(Self.push(.update, 90, timestamp: 30))
        #expect(older == .noEffect(.outOfOrder))
        #expect(older.result == .noEffect && older.warnings.isEmpty)
        #expect(engine.apply(Self.push(.update, 100, timestamp: 60)) == .noEffect(.outOfOrder), "an equal timestamp is not newer")
        #expect(engine.record?.contentTimestamp == Self.t0 + 60)
        #expect(engine.withoutEffect("out_of_order") == 2)
        // The app's own update and a stale report about older content: no push, not counted.
        #expect(engine.apply(Self.event(.activityUpdated, 110, timestamp: 50, content: "{}")) == .noEffect(.outOfOrder))
        #expect(engine.apply(Self.event(.activityStale, 50)) == .noEffect(.outOfOrder))
        #expect(engine.withoutEffect("out_of_order") == 2)
    }

    @Test func aPushToTheOldTokenIsSuperseded() {
        var engine = Engine()
        engine.apply(Self.started())
        engine.apply(Self.event(.activityTokenUpdated, 100, token: Self.tokenB))
        #expect(engine.apply(Self.push(.update, 120, token: Self.tokenA)) == .noEffect(.supersededToken))
        #expect(engine.withoutEffect("superseded_token") == 1)
        // A rotation reported after a later one names a token already replaced.
        #expect(engine.apply(Self.event(.activityTokenUpdated, 50, token: "c3c3c3c3c3c3c3c3")) == .noEffect(.supersededToken))
        #expect(engine.record?.tokenFingerprint == Self.tokenB)
        #expect(engine.record?.tokenRotations == 2)
        #expect(engine.withoutEffect("superseded_token") == 1, "a device's report is no push")
    }

    @Test func afterTheEndNothingApplies() {
        var engine = Engine()
        engine.apply(Self.started())
        engine.apply(Self.event(.activityEnded, 100))
        #expect(engine.apply(Self.push(.update, 120)) == .noEffect(.ended))
        #expect(engine.apply(Self.event(.activityUpdated, 130, content: "{}")) == .noEffect(.ended))
        #expect(engine.apply(Self.event(.activityEnded, 140)) == .noEffect(.ended))
        #expect(engine.apply(Self.event(.activityStale, 150)) == .noEffect(.ended))
        #expect(engine.withoutEffect("ended") == 1)
    }

    @Test func afterTheDismissalNothingApplies() {
        var engine = Engine()
        engine.apply(Self.started())
        #expect(engine.apply(Self.event(.activityDismissed, 100)) == .applied)
        #expect(engine.apply(Self.push(.update, 120)) == .noEffect(.dismissed))
        #expect(engine.apply(Self.push(.end, 130)) == .noEffect(.dismissed))
        #expect(engine.apply(Self.event(.activityDismissed, 140)) == .noEffect(.dismissed))
        #expect(engine.apply(Self.event(.activityUpdated, 150, content: "{}")) == .noEffect(.dismissed))
        #expect(engine.withoutEffect("dismissed") == 2)
    }

    @Test func eventsForNoActivityAreUnknown() {
        var engine = Engine()
        #expect(engine.apply(Self.push(.update, 10)) == .noEffect(.unknownActivity))
        #expect(engine.apply(Self.push(.end, 20)) == .noEffect(.unknownActivity))
        for type in [EventType.activityUpdated, .activityTokenUpdated, .activityStale, .activityEnded, .activityDismissed] {
            #expect(engine.apply(Self.event(type, 30, token: Self.tokenB)) == .noEffect(.unknownActivity), "\(type)")
        }
        #expect(engine.record == nil)
        #expect(engine.withoutEffect("unknown_activity") == 2, "pushes only")
        // An accepted push-to-start that names no activity is not a push to an unknown one: the
        // activity begins when the device reports it.
        // (One without an alert, which ActivityKit needs to start it, says so.)
        #expect(engine.apply(Self.push(.start, 40, activity: nil)) == EventEffect(warnings: [.startWithoutAlert]))
        #expect(engine.withoutEffect("unknown_activity") == 2)
    }

    @Test func aPushAPNsRefusedFailed() {
        var engine = Engine()
        #expect(engine.apply(Self.push(.update, 10, status: 410, reason: "Unregistered")) == .noEffect(.failed),
                "refused for an unknown activity: failed first")
        engine.apply(Self.started(20))
        #expect(engine.apply(Self.push(.update, 60, status: 429, reason: "TooManyRequests")) == .noEffect(.failed))
        #expect(engine.apply(Self.push(.update, 70, status: 0)) == .noEffect(.failed), "no answer at all")
        #expect(engine.apply(Self.push(.update, 80, status: 410, reason: "Unregistered")) == .noEffect(.failed))
        #expect(engine.record?.tokenInvalidReason == "Unregistered")
        #expect(engine.record?.contentTimestamp == Self.t0 + 20)
        // Counted by their answers in push_requests_total, never as pushes without effect.
        #expect(engine.counters.counters.keys.allSatisfy { $0.family != MonitorMetrics.pushesWithoutEffect.name })
    }

    @Test func aDuplicateIsCountedAsOneFromItsEffect() {
        var counters = MonitorCounters()
        counters.count(.noEffect(.duplicate), of: .pushSent)
        #expect(counters.value(MonitorMetrics.ingestDuplicates) == 1)
        #expect(counters.counters.count == 1, "a duplicate push is no push without effect: it was counted once already")
    }

    @Test func everyWhyHasAWireNameAndEveryCountedOneIsAWhy() {
        #expect(EventEffect.Why.allCases.map(\.rawValue)
                == ["out_of_order", "superseded_token", "ended", "dismissed", "unknown_activity", "undecodable_content",
                    "failed", "unknown_channel", "duplicate"])
        #expect(MonitorMetrics.withoutEffectReasons.allSatisfy { EventEffect.Why.allCases.contains($0) })
        #expect(EventEffect.Warning.allCases.map(\.name)
                == ["occurred_at_in_future", "ended_before_start", "timestamp_in_future", "timestamp_in_past",
                    "stale_date_in_past", "dismissal_date_beyond_4h", "payload_too_large", "start_without_alert",
                    "unknown_reason", "priority1_on_token", "expiration_on_no_storage_channel"])
    }

    @Test func timeReportsWhatItChanged() {
        var engine = Engine()
        engine.apply(Self.started(staleDate: 600))
        engine.apply(Self.push(.update, 900, timestamp: 100))  // its stale date passed at 600, before this push
        #expect(engine.passed == [TimeTransition(kind: .stale, at: Self.t0 + 600)])
        var counters = MonitorCounters()
        let passed = StateEngine().advance(&engine.record!, to: Self.t0 + 13 * 3600, counters: &counters, labels: engine.labels)
        #expect(passed == [TimeTransition(kind: .ended, at: Self.t0 + 8 * 3600),
                           TimeTransition(kind: .dismissed, at: Self.t0 + 12 * 3600)])
        // An end with the immediate policy takes the activity off the lock screen at once.
        var other = Engine()
        other.apply(Self.started())
        var end = Self.event(.activityEnded, 50)
        end.dismissalPolicy = .immediate
        other.apply(end)
        #expect(other.passed == [TimeTransition(kind: .dismissed, at: Self.t0 + 50)])
    }

    /// Issue 19, item 6: impossible dates are stored with a warning and take effect when they
    /// can have happened, so that no gauge counts an activity for decades.
    @Test func aStartDatedYearsAheadTakesEffectAtItsReceipt() {
        var engine = Engine()
        let received = Self.t0
        let effect = engine.apply(Self.started(86_400 * 365 * 70), receivedAt: received)
        #expect(effect == EventEffect(warnings: [.occurredAtInFuture]))
        #expect(engine.record?.startedAt == received)
        #expect(engine.record?.contentTimestamp == received, "the defaulted timestamp moves with the date")
        #expect(engine.record?.state(at: received + 9 * 3600) == .ended, "the 8-hour life counts from the receipt")
        #expect(engine.counters.value(MonitorMetrics.pushWarnings, "occurred_at_in_future") == 1)
        // Within 5 minutes of the receipt a date stands as given (clocks differ a little).
        var near = Engine()
        #expect(near.apply(Self.started(299), receivedAt: received) == .applied)
        #expect(near.record?.startedAt == received + 299)
    }

    @Test func anEndDatedBeforeTheStartEndsAtTheStart() {
        for type in [EventType.activityEnded, .activityDismissed] {
            var engine = Engine()
            engine.apply(Self.started(1000))
            let effect = engine.apply(Self.event(type, -86_400 * 365 * 25), receivedAt: Self.t0 + 2000)
            #expect(effect == EventEffect(warnings: [.endedBeforeStart]), "\(type)")
            #expect(engine.record?.endedAt == Self.t0 + 1000, "\(type)")
            #expect(engine.counters.value(MonitorMetrics.pushWarnings, "ended_before_start") == 1)
        }
    }

    @Test func aTimestampFarFromItsDateIsModelledAsSentAndWarned() {
        var engine = Engine()
        engine.apply(Self.started())
        // Milliseconds-like far future: the phone takes it as newest, then ignores later updates.
        let ahead = engine.apply(Self.push(.update, 60, timestamp: 3 * 86_400))
        #expect(ahead == EventEffect(warnings: [.timestampInFuture]))
        #expect(engine.record?.contentTimestamp == Self.t0 + 3 * 86_400)
        #expect(engine.apply(Self.push(.update, 120)) == .noEffect(.outOfOrder))
        let behind = engine.apply(Self.push(.update, 180, timestamp: -2 * 86_400))
        #expect(behind == EventEffect(why: .outOfOrder, warnings: [.timestampInPast]))
        #expect(engine.counters.value(MonitorMetrics.pushWarnings, "timestamp_in_future") == 1)
        #expect(engine.counters.value(MonitorMetrics.pushWarnings, "timestamp_in_past") == 1)
    }

    // MARK: The rules' states, each rule alone (the vectors run them through the whole server)

    static let type = "LiveActivityAttributes"

    @Test func theStaleDatePassesAndANewerUpdateClearsIt() {
        var engine = Engine()
        engine.apply(Self.started(staleDate: 600))
        #expect(engine.record?.state(at: Self.t0 + 599) == .active)
        #expect(engine.record?.state(at: Self.t0 + 600) == .stale, "stale from its stale date, before any sweep")
        #expect(engine.record?.nextDeadline == Self.t0 + 600)
        StateEngine().advance(&engine.record!, to: Self.t0 + 700, counters: &engine.counters, labels: engine.labels)
        #expect(engine.counters.value(MonitorMetrics.staleTransitions, Self.type) == 1)
        // A newer update replaces the content with its own stale date (none): active again.
        #expect(engine.apply(Self.event(.activityUpdated, 800, content: #"{"progress":0.9}"#)) == .applied)
        #expect(engine.record?.state(at: Self.t0 + 800) == .active)
        #expect(engine.record?.staleDate == nil && engine.record?.staleCounted == false)
        // An older one is dropped and leaves the stale content's replacement alone.
        #expect(engine.apply(Self.event(.activityUpdated, 900, timestamp: 500, content: "{}")) == .noEffect(.outOfOrder))
        #expect(engine.record?.contentState == JSONText(written: #"{"progress":0.9}"#))
    }

    @Test func aDeviceStaleReportHoldsUntilANewerUpdate() {
        var engine = Engine()
        engine.apply(Self.started())
        #expect(engine.apply(Self.event(.activityStale, 100)) == .applied)
        #expect(engine.record?.state(at: Self.t0 + 100) == .stale, "stale without a stale date")
        #expect(engine.apply(Self.event(.activityStale, 110)) == .applied)
        #expect(engine.counters.value(MonitorMetrics.staleTransitions, Self.type) == 1, "one stale period, counted once")
        engine.apply(Self.push(.update, 200))
        #expect(engine.record?.state(at: Self.t0 + 200) == .active)
        #expect(engine.record?.reportedStale == false)
    }

    @Test func theSystemEndsAtEightHoursAndTheLockScreenClearsFourHoursLater() {
        var engine = Engine()
        engine.apply(Self.started())
        let eight = Self.t0 + LockScreenRules.maxActiveDuration
        #expect(engine.record?.state(at: eight - 1) == .active)
        #expect(engine.record?.state(at: eight) == .ended, "ended at 8 h, before any sweep")
        #expect(engine.record?.visibleUntil(at: eight) == eight + 4 * 3600)
        StateEngine().advance(&engine.record!, to: eight, counters: &engine.counters, labels: engine.labels)
        #expect(engine.record?.endedBy == .system && engine.record?.endedAt == eight)
        #expect(engine.counters.value(MonitorMetrics.ended, Self.type, EndedBy.system.rawValue) == 1)
        #expect(engine.record?.state(at: eight + 4 * 3600 - 1) == .ended)
        #expect(engine.record?.state(at: eight + 4 * 3600) == .dismissed)
        // An app's end reported after the system's is no second end.
        #expect(engine.apply(Self.event(.activityEnded, 9 * 3600)) == .noEffect(.ended))
        #expect(engine.counters.value(MonitorMetrics.ended, Self.type, EndedBy.app.rawValue) == 0)
    }

    @Test func theDismissalDateIsHeldBetweenTheEndAndFourHoursAfterIt() {
        func ended(at end: Double, dismissal: Double?, policy: DismissalPolicy? = nil) -> ActivityRecord? {
            var engine = Engine()
            engine.apply(Self.started())
            var e = Self.event(.activityEnded, end)
            e.dismissalDate = dismissal.map { Self.t0 + $0 }
            e.dismissalPolicy = policy ?? (dismissal == nil ? nil : .after)
            engine.apply(e)
            return engine.record
        }
        #expect(ended(at: 100, dismissal: nil)?.visibleUntil == Self.t0 + 100 + 4 * 3600, "the default: 4 h")
        #expect(ended(at: 100, dismissal: 1000)?.visibleUntil == Self.t0 + 1000)
        #expect(ended(at: 100, dismissal: 50)?.state(at: Self.t0 + 100) == .dismissed, "a date in the past: gone at once")
        #expect(ended(at: 100, dismissal: 100 + 10 * 3600)?.visibleUntil == Self.t0 + 100 + 4 * 3600, "held to 4 h")
        #expect(ended(at: 100, dismissal: nil, policy: .immediate)?.visibleUntil == Self.t0 + 100)
        // The user's dismissal ends it and takes it off at once.
        var engine = Engine()
        engine.apply(Self.started())
        engine.apply(Self.event(.activityDismissed, 300))
        #expect(engine.record?.state(at: Self.t0 + 300) == .dismissed && engine.record?.endedAt == Self.t0 + 300)
        #expect(engine.counters.value(MonitorMetrics.dismissed, Self.type) == 1)
    }

    @Test func aRotationReplacesTheTokenAndClearsItsInvalidation() {
        var engine = Engine()
        engine.apply(Self.started())
        engine.apply(Self.push(.update, 60, status: 410, reason: "Unregistered"))
        #expect(engine.record?.tokenInvalidated == true)
        #expect(engine.apply(Self.event(.activityTokenUpdated, 100, token: Self.tokenB)) == .applied)
        #expect(engine.record?.tokenFingerprint == Self.tokenB && engine.record?.tokenInvalidated == false)
        #expect(engine.record?.tokenRotations == 1 && engine.record?.tokenRotatedAt == Self.t0 + 100)
        #expect(engine.counters.value(MonitorMetrics.tokenRotations, Self.type) == 1)
        // The same token again confirms it: no rotation.
        #expect(engine.apply(Self.event(.activityTokenUpdated, 120, token: Self.tokenB)) == .applied)
        #expect(engine.record?.tokenRotations == 1)
        // Pushes to the new token apply again.
        #expect(engine.apply(Self.push(.update, 130, token: Self.tokenB)) == .applied)
    }
}
