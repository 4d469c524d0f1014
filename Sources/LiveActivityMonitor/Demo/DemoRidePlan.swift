/// How one simulated ride booking goes (seed 001: `LiveActivityAttributes`, content
/// `{driverName, rating, progress, duration}`): its length, how it starts, how often the
/// backend pushes, and the faults it meets. Fault times are seconds after the start; a fault
/// happens at the first routine update at or after its time.
struct DemoRidePlan: Sendable {
    /// Seconds from the start to the end (by push, or by the app after a dead token).
    var duration: Double = 180
    /// ETA shown at the start, in minutes (the content's `duration`).
    var etaMinutes = 9
    /// Seconds between routine updates.
    var updateGap: ClosedRange<Double> = 8...20
    /// The first updates come this fast (the opening burst wants faults within seconds).
    var quickUpdates = 0
    /// Started remotely (iOS 17.2 push-to-start) instead of by the app.
    var pushToStart = false
    /// The app's `activity.started` report never arrived: every push is to an unknown activity.
    var startReportLost = false
    /// Share of routine updates sent with apns-priority 10 (the rest use 5).
    var priority10Share = 0.25
    /// The stale-date each update sets, in seconds after it.
    var staleAfter: Double = 60
    /// The dismissal-date of the end push, in seconds after the end (the seed uses 30).
    var dismissAfter: Double = 30

    /// The device rotates the update token; the backend keeps using the old one for this many pushes.
    var rotationAt: Double?
    var pushesToOldToken = 0
    /// APNs declares the token dead (410 Unregistered or 400 BadDeviceToken): the backend stops
    /// pushing, the card goes stale, and the app ends it when the ride is over.
    var deadTokenAt: Double?
    var deadTokenStatus = 410
    /// 429 TooManyRequests, retried a few seconds later.
    var throttledAt: Double?
    /// 500 InternalServerError or 503 ServiceUnavailable, retried.
    var serverErrorAt: Double?
    var serverErrorStatus = 503
    /// No answer from APNs (status 0 after a 10 s timeout), retried.
    var timeoutAt: Double?
    /// 413 PayloadTooLarge: an update with an oversized alert (a backend bug), not retried.
    var oversizedAt: Double?
    /// A retried older update arrives after a newer one: its timestamp is not newer.
    var lateUpdateAt: Double?
    /// The backend's update job stalls this long: the card passes its stale-date.
    var stallAt: Double?
    var stallLength: Double = 100
    /// The app reports the stale transition (`activity.stale`) when it happens.
    var reportsStale = false
    /// A priority-10 storm (every GPS fix pushed at priority 10): this many pushes this far apart.
    var stormAt: Double?
    var stormPushes = 20
    var stormGap: Double = 0.5
    /// The rider cancels in the app: ended by the app, removed at once.
    var cancelledByRider = false
    /// One more update this long after the end (its effect: none).
    var pushAfterEnd: Double?
    /// Some ingest report is sent twice (the reporter retried after a timeout).
    var duplicateReport = false

    /// A ride drawn from the fleet's usual mix of faults.
    static func random(_ r: inout DemoRandom) -> DemoRidePlan {
        var p = DemoRidePlan()
        p.duration = r.double(90...300)
        p.etaMinutes = r.int(4...15)
        p.pushToStart = r.chance(0.2)
        p.startReportLost = r.chance(0.01)
        p.priority10Share = r.chance(0.5) ? 0.1 : 0.35
        func at() -> Double { r.double(0...(p.duration * 0.8)) }
        if r.chance(0.15) {
            p.rotationAt = at()
            p.pushesToOldToken = r.chance(0.6) ? r.int(1...2) : 0
        }
        if r.chance(0.05) {
            p.deadTokenAt = at()
            p.deadTokenStatus = r.chance(0.6) ? 410 : 400
        }
        if r.chance(0.05) { p.throttledAt = at() }
        if r.chance(0.03) {
            p.serverErrorAt = at()
            p.serverErrorStatus = r.chance(0.5) ? 500 : 503
        }
        if r.chance(0.01) { p.timeoutAt = at() }
        if r.chance(0.005) { p.oversizedAt = at() }
        if r.chance(0.06) { p.lateUpdateAt = at() }
        if r.chance(0.08) {
            p.stallAt = at()
            p.stallLength = r.double(75...150)
            p.reportsStale = r.chance(0.5)
        }
        if r.chance(0.07) {
            p.stormAt = at()
            p.stormPushes = r.int(18...30)
            p.stormGap = r.double(0.4...1.5)
        }
        p.cancelledByRider = r.chance(0.05)
        if r.chance(0.04) { p.pushAfterEnd = r.chance(0.7) ? r.double(3...20) : r.double(40...90) }
        p.duplicateReport = r.chance(0.03)
        return p
    }
}
