#if canImport(ActivityKit) && os(iOS)
import ActivityKit
import Foundation
import LiveActivityWire

/// Reports what ActivityKit says about your activities: the few lines to add next to
/// `Activity.request`.
///
/// ```swift
/// let activity = try Activity.request(attributes: attributes, content: content, pushType: .token)
/// tracker.track(activity, bookingID: booking.id)
/// ```
///
/// `track` reports `activity.started` at once and what the activity shows then
/// (`activity.content` → `activity.observed`), then, until the activity is dismissed:
/// every new update token (`pushTokenUpdates` → `activity.token_updated`), every state change
/// (`activityStateUpdates` → `activity.stale`, `activity.ended`, `activity.dismissed`), every
/// content the phone shows (`contentUpdates` → `activity.observed`: the monitor confirms the
/// pushes it shows and finds those it missed), and, if asked, each content change as
/// `activity.updated` too. `trackPushToStartTokens` reports the device's push-to-start tokens
/// (`pushToStartTokenUpdates` → `device.push_to_start_token`). End activities with
/// `end(_:content:dismissalPolicy:dismissalDate:)` so that the monitor learns the dismissal
/// policy too.
///
/// The order and ids of these reports are `ActivityLifecycle`'s (built and tested on every
/// platform; this type is only the ActivityKit glue): every report of an activity waits for its
/// `activity.started`, and no event id is sent with two bodies. An end is reported once,
/// by `end(…)` or the observer, whichever comes first; the start of an activity tracked again
/// at the next launch (from `Activity<…>.activities`) is another report under another id, which
/// the monitor counts once.
@available(iOS 16.2, *)
@MainActor
public final class ActivityTracker {
    public let reporter: ActivityReporter
    private let lifecycle: ActivityLifecycle
    private var observations: [String: [Task<Void, Never>]] = [:]

    public init(reporter: ActivityReporter) {
        self.reporter = reporter
        lifecycle = ActivityLifecycle(report: { await reporter.report($0) })
    }

    /// Starts reporting `activity`'s life (once per activity; later calls do nothing).
    ///
    /// - Parameters:
    ///   - bookingID: your id for what the activity tracks (a ride's booking, a workout session);
    ///     support looks activities up by it.
    ///   - source: `.pushToStart` for an activity a push started (found in
    ///     `Activity<…>.activityUpdates`).
    ///   - channelID: the broadcast channel of `pushType: .channel(id)` (iOS 18): the monitor
    ///     applies that channel's broadcasts to the activity.
    ///   - startDate: the scheduled start of an activity requested with one (iOS 26): it is
    ///     `pending` until then.
    ///   - reportsContentUpdates: also report each content change as `activity.updated` (it is
    ///     always reported as `activity.observed`). Leave it off when content comes by push: the
    ///     backend's `push.sent` already reports it.
    public func track<Attributes: ActivityAttributes>(
        _ activity: Activity<Attributes>, bookingID: String, source: ActivityStarted.Source = .app,
        channelID: String? = nil, startDate: Date? = nil, reportsContentUpdates: Bool = false
    ) {
        let activityID = activity.id
        guard observations[activityID] == nil else { return }
        let reporter = self.reporter
        let lifecycle = self.lifecycle
        let content = activity.content
        let started = LiveActivityEvent.started(
            activityID: activityID, bookingID: bookingID, attributesType: String(describing: Attributes.self),
            ActivityStarted(contentState: Self.encode(content.state, "content state", reporter),
                            attributes: Self.encode(activity.attributes, "attributes", reporter),
                            staleDate: content.staleDate, relevanceScore: content.relevanceScore,
                            pushToken: activity.pushToken.map(PushToken.init), source: source,
                            startDate: startDate, channelID: channelID))
        // Everything else waits for `started`: the monitor ignores events of an activity it
        // does not know yet.
        lifecycle.start(started, alreadyEnded: Self.hasEnded(activity.activityState))

        let tokens = Task { @MainActor in
            await lifecycle.afterStart(activityID)
            for await token in activity.pushTokenUpdates {
                await reporter.report(.tokenUpdated(activityID: activityID, pushToken: PushToken(token)))
            }
        }
        let states = Task { @MainActor [weak self] in
            await lifecycle.afterStart(activityID)
            for await state in activity.activityStateUpdates {
                switch state {
                case .stale:
                    await reporter.report(.stale(activityID: activityID))
                case .ended:
                    // Left out when `end(…)` reported this end first (with its dismissal policy).
                    let final = activity.content
                    await lifecycle.end(.ended(activityID: activityID,
                                               ActivityEnded(contentState: Self.encode(final.state, "content state", reporter))))
                case .dismissed:
                    await lifecycle.dismiss(.dismissed(activityID: activityID))
                    self?.stopTracking(activityID: activityID)
                    return
                default:
                    // .active (again, after an update) and .pending (scheduled) change nothing to report.
                    break
                }
            }
        }
        // What the phone shows: once now (at launch, the content an earlier run left), then each
        // change. Evidence for the monitor, not an update.
        let contents = Task { @MainActor in
            await lifecycle.afterStart(activityID)
            await reporter.report(.observed(activityID: activityID,
                                            ActivityObserved(contentState: Self.encode(content.state, "content state", reporter),
                                                             staleDate: content.staleDate,
                                                             relevanceScore: content.relevanceScore)))
            for await update in activity.contentUpdates {
                let state = Self.encode(update.state, "content state", reporter)
                await reporter.report(.observed(activityID: activityID,
                                                ActivityObserved(contentState: state, staleDate: update.staleDate,
                                                                 relevanceScore: update.relevanceScore)))
                if reportsContentUpdates {
                    await reporter.report(.updated(activityID: activityID,
                                                   ActivityUpdated(contentState: state, staleDate: update.staleDate,
                                                                   relevanceScore: update.relevanceScore)))
                }
            }
        }
        observations[activityID] = [tokens, states, contents]
    }

    /// Reports the device's push-to-start token for `Attributes` now and whenever it changes
    /// (`Activity<Attributes>.pushToStartTokenUpdates`, iOS 17.2+), as
    /// `device.push_to_start_token`. Call it once at launch, next to where you send the token to
    /// your backend. `deviceID`: your app's installation id, stable across launches (the
    /// monitor keeps one current token per device and type; a newer one supersedes the old).
    @available(iOS 17.2, *)
    public func trackPushToStartTokens<Attributes: ActivityAttributes>(_ type: Attributes.Type, deviceID: String) {
        let key = "push-to-start:" + String(describing: Attributes.self)
        guard observations[key] == nil else { return }
        let reporter = self.reporter
        let attributesType = String(describing: Attributes.self)
        observations[key] = [Task { @MainActor in
            if let token = Activity<Attributes>.pushToStartToken {
                await reporter.report(.pushToStartToken(deviceID: deviceID, attributesType: attributesType,
                                                        pushToken: PushToken(token)))
            }
            for await token in Activity<Attributes>.pushToStartTokenUpdates {
                await reporter.report(.pushToStartToken(deviceID: deviceID, attributesType: attributesType,
                                                        pushToken: PushToken(token)))
            }
        }]
    }

    /// Ends `activity` like `Activity.end(_:dismissalPolicy:)`, first reporting
    /// `activity.ended` with the dismissal policy (which ActivityKit does not tell observers),
    /// after the activity's `activity.started` (even one tracked a moment ago). An activity that
    /// had ended already is ended again (ActivityKit applies the new policy) but not reported:
    /// its end was reported when it happened.
    /// Nonisolated, so that it runs where the caller holds the activity (like `Activity.end`).
    nonisolated public func end<Attributes: ActivityAttributes>(
        _ activity: Activity<Attributes>, content: ActivityContent<Attributes.ContentState>? = nil,
        dismissalPolicy: ActivityEnded.DismissalPolicy = .default, dismissalDate: Date? = nil
    ) async {
        let policy: ActivityUIDismissalPolicy
        var date: Date?
        switch dismissalPolicy {
        case .default: policy = .default
        case .immediate: policy = .immediate
        case .after:
            let when = dismissalDate ?? Date()
            date = when
            policy = .after(when)
        }
        let fields = ActivityEnded(contentState: content.map { Self.encode($0.state, "content state", reporter) },
                                   dismissalDate: date, dismissalPolicy: dismissalPolicy)
        await lifecycle.end(.ended(activityID: activity.id, fields), alreadyEnded: Self.hasEnded(activity.activityState))
        await activity.end(content, dismissalPolicy: policy)
    }

    /// Stops observing an activity (it is no longer reported). Tracking it again later in this
    /// process observes it again, without reporting its start a second time.
    public func stopTracking(activityID: String) {
        for task in observations[activityID] ?? [] { task.cancel() }
        observations[activityID] = nil
    }

    /// Whether ActivityKit says the activity's end is behind it.
    private nonisolated static func hasEnded(_ state: ActivityState) -> Bool {
        state == .ended || state == .dismissed
    }

    /// The JSON of a `Codable` ActivityKit value. It cannot fail for ordinary content states; if
    /// it does, the reporter's log says so and an empty object stands in.
    private nonisolated static func encode(_ value: some Encodable, _ what: String, _ reporter: ActivityReporter) -> JSONContent {
        do {
            return try JSONContent(encoding: value)
        } catch {
            reporter.configuration.log?("could not encode the \(what) as JSON (\(error)); reporting {}")
            return [:]
        }
    }
}
#endif
