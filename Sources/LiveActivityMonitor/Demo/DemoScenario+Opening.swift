import Foundation
import JSON

/// What the demo posts first, so that a newcomer's dashboard (and a bounded test) shows every
/// fault class within seconds instead of after an hour of random traffic.
extension DemoScenario {
    /// Activities whose events happened hours ago: a timer left running past 8 h and a ride
    /// abandoned 8 h ago (the server ends both, by the system), two rides gone stale (one
    /// reported stale by the app), a ride ended by push and a timer stopped in the app, both
    /// already dismissed. The two stale rides end a few minutes into the demo.
    mutating func scheduleBackfill() {
        let s = start

        // A workout timer started 8 h 10 min ago and never stopped.
        let forgotten = newIdentity(app: Self.timerApp)
        let t1 = s - (8 * 3600 + 600)
        add([(t1, started(forgotten, type: Self.timerType, at: t1, content: Self.timerContent(startedAt: t1), relevance: 50))])

        // A ride abandoned 8 h 25 min ago after ten minutes of updates: stale, then ended by the system.
        add(backfilledRide(from: s - (8 * 3600 + 1500), updates: 5, every: 120, staleAfter: 180).script)

        // Two rides whose updates stopped 12 and 20 minutes ago: stale now.
        var stale = backfilledRide(from: s - 2100, updates: 11, every: 120, staleAfter: 300)
        let (who3, final3) = (stale.who, stale.final)
        stale.script.append((s + 150, push(who3, at: s + 150, Push(event: "end", priority: 10, token: who3.token,
                                                                   timestamp: s + 150, content: final3,
                                                                   dismissalDate: s + 180))))
        add(stale.script)
        var reported = backfilledRide(from: s - 3000, updates: 10, every: 120, staleAfter: 300)
        let lastUpdate = s - 3000 + 10 * 120
        reported.script.append((lastUpdate + 300, self.reported("activity.stale", reported.who, at: lastUpdate + 300)))
        reported.script.append((s + 300, ended(reported.who, at: s + 300, content: reported.final, policy: "immediate")))
        add(reported.script)

        // A ride that ended by push 50 minutes ago, dismissed 30 s later.
        var done = backfilledRide(from: s - 4200, updates: 8, every: 120, staleAfter: 300)
        let end = s - 4200 + 9 * 120
        done.script.append((end, push(done.who, at: end, Push(event: "end", priority: 10, token: done.who.token,
                                                              timestamp: end, content: done.final,
                                                              dismissalDate: end + 30))))
        add(done.script)

        // A timer stopped in the app 45 minutes ago, removed at once.
        let stopped = newIdentity(app: Self.timerApp)
        let t6 = s - 5400
        add([(t6, started(stopped, type: Self.timerType, at: t6, content: Self.timerContent(startedAt: t6), relevance: 50)),
             (s - 2700, ended(stopped, at: s - 2700, content: Self.timerContent(startedAt: t6), policy: "immediate"))])
    }

    /// A ride started at `t0` with `updates` pushes `every` seconds apart and nothing after.
    private mutating func backfilledRide(from t0: Double, updates: Int, every: Double, staleAfter: Double)
        -> (who: DemoIdentity, script: [(time: Double, event: JSONObject)], final: JSONValue) {
        let who = newIdentity(app: Self.rideApp)
        let driver = random.pick(Self.drivers)
        let rating = String(format: "%.1f", random.double(4.2...5.0))
        let eta = updates + 2
        func content(_ i: Int) -> JSONValue {
            Self.rideContent(driver: driver, rating: rating, progress: Double(i) / Double(eta), eta: eta - i)
        }
        var script: [(time: Double, event: JSONObject)] = [
            (t0, started(who, type: Self.rideType, at: t0, content: content(0),
                         attributes: .object(Self.object([("name", .string("Live Activity"))])),
                         staleDate: t0 + staleAfter, relevance: 100, token: who.token)),
        ]
        for i in 1...updates {
            let t = t0 + Double(i) * every
            script.append((t, push(who, at: t, Push(token: who.token, timestamp: t, content: content(i),
                                                    staleDate: t + staleAfter))))
        }
        return (who, script, Self.rideContent(driver: driver, rating: rating, progress: 1, eta: 0))
    }

    /// Live activities started in the first second, each meeting one fault class within about
    /// 4 s: a token rotation followed by pushes to the old token, 410 Unregistered, 400
    /// BadDeviceToken, a priority-10 storm throttled with 429s, 503 and 500 (retried), a late
    /// update, a push after the end, a lost start report, a duplicate report; and the normal
    /// endings: by push with a dismissal-date, by the app, swiped away, started by push.
    mutating func scheduleOpening() {
        let s = start
        var rides: [DemoRidePlan] = []
        func ride(_ change: (inout DemoRidePlan) -> Void) {
            var p = DemoRidePlan()
            p.duration = 240
            p.quickUpdates = 4
            change(&p)
            rides.append(p)
        }
        ride { $0.rotationAt = 0; $0.pushesToOldToken = 2; $0.duplicateReport = true }
        ride { $0.deadTokenAt = 0; $0.deadTokenStatus = 410 }
        ride { $0.deadTokenAt = 0; $0.deadTokenStatus = 400 }
        ride { $0.stormAt = 0; $0.stormPushes = 22; $0.stormGap = 0.12; $0.duration = 300 }
        ride { $0.serverErrorAt = 0; $0.serverErrorStatus = 503; $0.throttledAt = 1.5 }
        ride { $0.lateUpdateAt = 0.9 }
        ride { $0.duration = 2.5; $0.quickUpdates = 2; $0.dismissAfter = 1; $0.pushAfterEnd = 0.5 }
        ride { $0.pushToStart = true; $0.serverErrorAt = 0; $0.serverErrorStatus = 500 }
        ride { $0.startReportLost = true; $0.duration = 60; $0.quickUpdates = 2 }
        var t = s
        for plan in rides {
            scheduleRide(plan, at: t)
            t += 0.1
        }
        var paused = DemoTimerPlan()
        (paused.duration, paused.pauseAt, paused.pauseLength, paused.ending) = (3.5, 0.8, 1.2, .stopImmediately)
        scheduleTimer(paused, at: t)
        var swiped = DemoTimerPlan()
        (swiped.duration, swiped.ending) = (2.5, .swipedAway)
        scheduleTimer(swiped, at: t + 0.1)
        scheduleDeliveryFaults()
        scheduleMatch()
    }
}
