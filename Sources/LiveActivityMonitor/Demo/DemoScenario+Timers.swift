import JSON

/// A workout timer (seed 000), scripted whole when it starts: started from the app, perhaps
/// paused and resumed, then stopped from the app or swiped away. The timer app sends no pushes.
extension DemoScenario {
    mutating func scheduleTimer(_ plan: DemoTimerPlan, at t0: Double) {
        let who = newIdentity(app: Self.timerApp)
        var script: [(time: Double, event: JSONObject)] = []
        var current = Self.timerContent(startedAt: t0)
        script.append((t0, started(who, type: Self.timerType, at: t0, content: current, relevance: 50)))
        if let pauseAt = plan.pauseAt {
            let paused = t0 + pauseAt
            script.append((paused, updated(who, at: paused, content: Self.timerContent(startedAt: t0, pausedAt: paused))))
            let resumed = paused + plan.pauseLength
            current = Self.timerContent(startedAt: t0 + plan.pauseLength)
            script.append((resumed, updated(who, at: resumed, content: current)))
        }
        let end = t0 + max(plan.duration, plan.pauseAt.map { $0 + plan.pauseLength + 1 } ?? 0)
        switch plan.ending {
        case .stopImmediately:
            script.append((end, ended(who, at: end, content: current, policy: "immediate")))
        case .stopAndLinger(let seconds):
            script.append((end, ended(who, at: end, content: current, policy: "after", dismissalDate: end + seconds)))
        case .swipedAway:
            script.append((end, reported("activity.dismissed", who, at: end)))
        }
        add(script)
    }
}
