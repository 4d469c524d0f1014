import Foundation

/// The order and the ids of what `ActivityTracker` reports about each activity's life, kept
/// apart from ActivityKit so that it is built and tested on every platform: the tracker only
/// turns ActivityKit's values and sequences into calls here.
///
/// - **The start goes first.** `start` reports `activity.started` in a task of its own (the
///   tracker's `track` is synchronous) and keeps that task; every later report of the activity
///   waits for it, `end` included. A stop pressed milliseconds after the start still reaches
///   the reporter after the start, and so the monitor, which ignores the end of an activity it
///   has not seen start.
/// - **One body per id.** The monitor stores an id once; the same id sent again with another
///   body is a conflict (`liveactivity_ingest_conflicts_total`, a client bug on the operator's
///   dashboard). So no id here is ever sent with a second body:
///   - `activity.started` has a fresh id each time a process starts tracking the activity. At a
///     relaunch the start is reported again with what the phone shows then: another report,
///     with other content and time, so another id. The monitor takes the start of an activity
///     it knows as filling gaps only (counted once), and one it never saw (the first report was
///     lost with the process that made it) as the start.
///   - `activity.ended` (`<activity id>:ended`) is reported once: by `end` or by the state
///     observer, whichever comes first. For a stop in the app that is `end`, whose report
///     carries the dismissal policy; the observer's report of the same end is left out. It is
///     not reported at all for an activity ActivityKit says had ended before (`alreadyEnded`:
///     found ended at a relaunch, or ended again): that end was reported when it happened.
///   - `activity.dismissed` (`<activity id>:dismissed`) is reported once.
///
/// What it keeps of an activity (a few bytes and a finished task) stays for the process's life,
/// so that none of this is reported twice; a process sees few activities.
///
/// `@unchecked Sendable`: every access to `activities` happens under `lock` (not `Mutex`, which
/// needs macOS 15 / iOS 18). A lock rather than an actor because `start` must be synchronous:
/// an `end` called right after `track` has to find the start's task.
final class ActivityLifecycle: @unchecked Sendable {
    /// Hands an event to the reporter (`ActivityReporter.report`: it returns once the event is
    /// buffered, so reports made one after the other are sent in that order).
    typealias Report = @Sendable (LiveActivityEvent) async -> Void

    /// What was reported of one activity in this process.
    private struct Life {
        /// The task reporting the start; nil for an activity ended here without being tracked.
        var start: Task<Void, Never>?
        var ended = false
        var dismissed = false
    }

    private let report: Report
    private let lock = NSLock()
    private var activities: [String: Life] = [:]

    init(report: @escaping Report) {
        self.report = report
    }

    /// The id of an activity's `activity.ended`: derived, so that its two reporters (`end` and
    /// the state observer) name the same end.
    static func endedID(_ activityID: String) -> String { activityID + ":ended" }

    /// The id of an activity's `activity.dismissed`.
    static func dismissedID(_ activityID: String) -> String { activityID + ":dismissed" }

    /// Reports `started` (an `activity.started`, under a fresh id), in a task that the
    /// activity's later reports wait for. Does nothing when this process reported the
    /// activity's start already (tracked again after `stopTracking`): the monitor has it.
    /// `alreadyEnded`: ActivityKit says the activity has ended (found so at a relaunch), so its
    /// end is not reported again.
    func start(_ started: LiveActivityEvent, alreadyEnded: Bool = false) {
        guard let activityID = started.activityID else { return }
        var fresh = started
        fresh.id = LiveActivityEvent.newID(at: started.occurredAt)
        let event = fresh
        let report = self.report
        locked {
            var life = activities[activityID] ?? Life()
            guard life.start == nil else { return }
            life.start = Task { await report(event) }
            life.ended = life.ended || alreadyEnded
            activities[activityID] = life
        }
    }

    /// Returns once the start of `activityID` is reported (at once for an activity not started
    /// here).
    func afterStart(_ activityID: String) async {
        await locked { activities[activityID]?.start }?.value
    }

    /// Reports `ended` (an `activity.ended`, under `endedID`) after the activity's start, unless
    /// its end was reported already (by the other of `end` and the state observer) or
    /// `alreadyEnded` (ActivityKit says it had ended before). Returns whether it reported.
    @discardableResult
    func end(_ ended: LiveActivityEvent, alreadyEnded: Bool = false) async -> Bool {
        await reportOnce(ended, id: Self.endedID, done: \.ended, alreadyDone: alreadyEnded)
    }

    /// Reports `dismissed` (an `activity.dismissed`, under `dismissedID`) after the activity's
    /// start, unless it was reported already. Returns whether it reported.
    @discardableResult
    func dismiss(_ dismissed: LiveActivityEvent) async -> Bool {
        await reportOnce(dismissed, id: Self.dismissedID, done: \.dismissed, alreadyDone: false)
    }

    /// Reports `event` under `id(activity id)` after the activity's start, unless `done` is set
    /// already; sets it (also when `alreadyDone`, without reporting). Claimed before waiting for
    /// the start, so that of two reports of one fact, the first caller's body is the one sent.
    private func reportOnce(_ event: LiveActivityEvent, id: (String) -> String, done: WritableKeyPath<Life, Bool>,
                            alreadyDone: Bool) async -> Bool {
        guard let activityID = event.activityID else { return false }
        let claim: (first: Bool, start: Task<Void, Never>?) = locked {
            var life = activities[activityID] ?? Life()
            defer { activities[activityID] = life }
            guard !life[keyPath: done] else { return (false, nil) }
            life[keyPath: done] = true
            return (!alreadyDone, life.start)
        }
        guard claim.first else { return false }
        await claim.start?.value
        var event = event
        event.id = id(activityID)
        await report(event)
        return true
    }

    /// `body` under `lock` (`NSLocking.withLock` needs macOS 14 / iOS 17).
    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
