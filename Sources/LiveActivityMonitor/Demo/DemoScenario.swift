import Foundation
import JSON

/// The deterministic part of `serve --demo`: which events happen when, for both seed apps,
/// with the faults real fleets see. It knows nothing of HTTP or threads: `DemoTraffic` asks it
/// for the events due by "now" and posts them.
///
/// Given the same settings, the same calls give the same events, however the time between
/// calls is sliced (arrivals and scripted events are interleaved in time order). `runTag` only
/// changes identities (activity, booking and event ids, tokens), so that a second run on the
/// same database is new traffic, not a replay of duplicates.
///
/// At `start` it schedules (1) a backfill: activities whose events happened hours ago (a timer
/// left running past 8 h, rides gone stale, finished rides), and (2) an opening burst that shows
/// every fault class within about 4 s. Then activities arrive as a Poisson process at
/// `ratePerMinute`, each scripted whole when it starts; at most `maxLive` are tracked at once.
struct DemoScenario: Sendable {
    struct Settings: Sendable {
        var seed: UInt64 = DemoTraffic.defaultSeed
        var runTag: UInt64 = 0
        /// Activities started per minute, both apps together.
        var ratePerMinute = 20.0
        /// Activities scripted but not finished, at most; arrivals beyond it are skipped.
        var maxLive = 200
        /// Share of arrivals that are rides (the rest are workout timers).
        var rideShare = 0.6
        var backfill = true
        var openingBurst = true
    }

    static let rideType = "LiveActivityAttributes"
    static let timerType = "TimerWidgetAttributes"
    static let rideApp = "com.example.autopilot"
    static let timerApp = "com.example.fancytimer"
    static let drivers = ["Ana", "Ravi", "Mei", "Jonas", "Fatima", "Luis", "Aisha", "Tomasz", "Kenji", "Priya",
                          "Diego", "Zoë", "Olu", "Sven", "Ines", "Omar", "Hana", "Mateo", "Leila", "Björn"]

    let settings: Settings
    let start: Double
    /// Every choice of what happens (plans, timings, latencies).
    var random: DemoRandom
    /// Identities only (ids, tokens, bookings): mixed with the run tag.
    var ids: DemoRandom
    var schedule = DemoSchedule()
    var nextArrival: Double
    /// Activities whose script has events left.
    private(set) var live = 0
    /// Arrivals skipped because `maxLive` were live.
    private(set) var skipped = 0
    private(set) var started = 0
    var eventCounter = 0
    var bookingNumber: Int
    let eventPrefix: String

    init(settings: Settings, start: Double) {
        self.settings = settings
        self.start = start
        random = DemoRandom(seed: settings.seed)
        ids = DemoRandom(seed: settings.seed ^ (settings.runTag &* 0x2545_F491_4F6C_DD1D))
        bookingNumber = 1000 + ids.int(0...7999)
        eventPrefix = "demo-" + String(settings.runTag, radix: 36) + "-"
        nextArrival = start
        if settings.backfill { scheduleBackfill() }
        if settings.openingBurst { scheduleOpening() }
        nextArrival = start + (settings.openingBurst ? 4 : 0) + random.exponential(mean: arrivalMean)
    }

    private var arrivalMean: Double { 60 / settings.ratePerMinute }

    /// Every event due by `now`, in time order. Arrivals up to `now` are scripted first, in
    /// the same time order, so the result does not depend on how often this is called.
    mutating func events(until now: Double) -> [JSONObject] {
        var out: [JSONObject] = []
        while true {
            let next = schedule.earliest ?? .infinity
            if nextArrival <= now, nextArrival <= next {
                let t = nextArrival
                if live < settings.maxLive {
                    if random.chance(settings.rideShare) {
                        scheduleRide(DemoRidePlan.random(&random), at: t)
                    } else {
                        scheduleTimer(DemoTimerPlan.random(&random), at: t)
                    }
                } else {
                    skipped += 1
                }
                nextArrival = t + random.exponential(mean: arrivalMean)
            } else if next <= now, let e = schedule.popFirst() {
                if e.closes { live -= 1 }
                out.append(e.event)
            } else {
                return out
            }
        }
    }

    /// Events scheduled and not yet returned.
    var pending: Int { schedule.count }

    // MARK: identities and scheduling

    mutating func newIdentity(app: String) -> DemoIdentity {
        bookingNumber += ids.int(1...3)
        return DemoIdentity(activityID: ids.uuid(), bookingID: "BK-\(bookingNumber)", app: app,
                            token: ids.hex(bytes: 32))
    }

    mutating func nextEventID() -> String {
        eventCounter += 1
        return eventPrefix + String(eventCounter)
    }

    /// Schedules one activity's script: `events` in order, the last one closing it.
    mutating func add(_ events: [(time: Double, event: JSONObject)]) {
        guard !events.isEmpty else { return }
        live += 1
        started += 1
        // Stable sort: retries and duplicates are scripted out of time order.
        let ordered = events.enumerated().sorted { a, b in
            a.element.time != b.element.time ? a.element.time < b.element.time : a.offset < b.offset
        }
        for (i, e) in ordered.enumerated() {
            schedule.add(DemoScheduledEvent(time: e.element.time, sequence: 0, event: e.element.event,
                                            closes: i == ordered.count - 1))
        }
    }
}
