import Foundation
import JSON

/// A ride booking, scripted whole when it starts (seed 001): started by the app (or by
/// push-to-start), updated by pushes with a moving progress and ETA, ended by a push with a
/// dismissal-date; with the plan's faults on the way.
extension DemoScenario {
    mutating func scheduleRide(_ plan: DemoRidePlan, at t0: Double) {
        var who = newIdentity(app: Self.rideApp)
        let driver = random.pick(Self.drivers)
        let rating = String(format: "%.1f", random.double(4.2...5.0))
        let attributes: JSONValue = .object(Self.object([("name", .string("Live Activity"))]))
        let end = t0 + plan.duration
        var script: [(time: Double, event: JSONObject)] = []

        func content(at t: Double) -> JSONValue {
            let progress = min(max((t - t0) / plan.duration, 0), 1)
            let eta = Int((Double(plan.etaMinutes) * (1 - progress)).rounded(.up))
            return Self.rideContent(driver: driver, rating: rating, progress: progress, eta: eta)
        }

        // The start.
        var shown = (timestamp: t0, content: content(at: t0))
        if plan.pushToStart {
            let pushToStartToken = ids.hex(bytes: 32)
            // The app sent the device's push-to-start token to the backend earlier.
            let registeredAt = t0 - random.double(60...600)
            script.append((registeredAt, self.pushToStartToken(who, device: "device-" + ids.hex(bytes: 8), token: pushToStartToken,
                                                               at: registeredAt)))
            let p = Push(event: "start", priority: 10, token: pushToStartToken, timestamp: t0, content: shown.content,
                         staleDate: t0 + plan.staleAfter, relevance: 100, attributes: attributes)
            script.append((t0, push(who, at: t0, p, includeActivityID: false)))
            // Before the first update: the backend learns the activity id from the app's report.
            let reportedAt = t0 + random.double(0.2...0.35)
            script.append((reportedAt, started(who, type: Self.rideType, at: t0, content: shown.content,
                                               attributes: attributes, staleDate: t0 + plan.staleAfter,
                                               relevance: 100, token: who.token, source: "push_to_start")))
        } else if !plan.startReportLost {
            script.append((t0, started(who, type: Self.rideType, at: t0, content: shown.content, attributes: attributes,
                                       staleDate: t0 + plan.staleAfter, relevance: 100, token: who.token)))
        }

        var pending = plan
        var oldToken: String?
        var oldTokenPushes = 0
        var deadToken = false
        var alerted = false
        var lastStaleDate = t0 + plan.staleAfter
        var t = t0
        var slot = 0
        while true {
            let next = t + (slot < plan.quickUpdates ? random.double(0.4...0.9) : random.double(plan.updateGap))
            slot += 1
            guard next < end - 0.5 else { break }
            t = next
            let offset = t - t0
            func due(_ at: Double?) -> Bool { at.map { offset >= $0 } ?? false }

            if due(pending.stallAt) {
                pending.stallAt = nil
                if plan.reportsStale, !deadToken {
                    script.append((lastStaleDate, reported("activity.stale", who, at: lastStaleDate)))
                }
                // A stall that outlasts the ride delays its end push too.
                t += plan.stallLength
                guard t < end - 0.5 else { break }
            }
            if due(pending.rotationAt) {
                pending.rotationAt = nil
                oldToken = who.token
                oldTokenPushes = plan.pushesToOldToken
                who.token = ids.hex(bytes: 32)
                script.append((t - 0.3, tokenUpdated(who, at: t - 0.3)))
            }
            if deadToken { continue }

            var p = Push(token: who.token, timestamp: t, content: content(at: t), staleDate: t + plan.staleAfter)
            p.priority = random.chance(plan.priority10Share) ? 10 : 5
            if oldTokenPushes > 0, let old = oldToken {
                p.token = old
                oldTokenPushes -= 1
            }
            if !alerted, case .object(let c) = p.content!, c["duration"] == .number(JSONNumber(1)) {
                alerted = true
                p.alert = ("Your driver is arriving", "\(driver) is 1 min away")
                p.priority = 10
            }
            var retryAfter: Double?
            if due(pending.deadTokenAt) {
                pending.deadTokenAt = nil
                p.status = plan.deadTokenStatus
                p.reason = plan.deadTokenStatus == 410 ? "Unregistered" : "BadDeviceToken"
                deadToken = true
            } else if due(pending.throttledAt) {
                pending.throttledAt = nil
                (p.status, p.reason) = (429, "TooManyRequests")
                retryAfter = random.double(2...5)
            } else if due(pending.serverErrorAt) {
                pending.serverErrorAt = nil
                p.status = plan.serverErrorStatus
                p.reason = plan.serverErrorStatus == 500 ? "InternalServerError" : "ServiceUnavailable"
                retryAfter = random.double(1...3)
            } else if due(pending.timeoutAt) {
                pending.timeoutAt = nil
                p.status = 0
                retryAfter = 10.5
            } else if due(pending.oversizedAt) {
                pending.oversizedAt = nil
                // The backend attached a large custom payload (not reported, only its size).
                (p.status, p.reason) = (413, "PayloadTooLarge")
                p.extraPayloadBytes = random.int(4200...5200)
            }
            let late = due(pending.lateUpdateAt) && p.status == 200
            if late { pending.lateUpdateAt = nil }
            script.append((t, push(who, at: t, p)))
            if p.status == 200, p.token == who.token {
                let previous = shown
                shown = (t, p.content!)
                // Now and then the app reports what the card shows (delivery evidence).
                if random.chance(0.2) {
                    let seenAt = t + random.double(0.2...0.35)
                    script.append((seenAt, observed(who, at: seenAt, content: p.content!)))
                }
                lastStaleDate = t + plan.staleAfter
                if late {
                    // The previous update, retried, lands after this one: not newer, so ignored.
                    var old = p
                    old.timestamp = previous.timestamp
                    old.content = previous.content
                    old.staleDate = previous.timestamp + plan.staleAfter
                    script.append((t + 0.4, push(who, at: t + 0.4, old)))
                }
            }
            if let retryAfter {
                var again = p
                again.status = 200
                again.reason = nil
                t += retryAfter
                script.append((t, push(who, at: t, again)))
                if again.token == who.token {
                    shown = (again.timestamp, again.content!)
                    lastStaleDate = again.timestamp + plan.staleAfter
                }
                continue
            }
            if due(pending.stormAt) {
                pending.stormAt = nil
                for k in 0..<plan.stormPushes {
                    t += plan.stormGap
                    var s = Push(priority: 10, token: who.token, timestamp: t, content: content(at: t),
                                 staleDate: t + plan.staleAfter)
                    // APNs starts throttling part-way through a storm.
                    if k >= 12, k % 3 == 0 { (s.status, s.reason) = (429, "TooManyRequests") }
                    script.append((t, push(who, at: t, s)))
                    if s.status == 200 {
                        shown = (t, s.content!)
                        lastStaleDate = t + plan.staleAfter
                    }
                }
            }
        }

        // The end.
        let final = Self.rideContent(driver: driver, rating: rating, progress: 1, eta: 0)
        var last = max(end, t + 0.5)
        if deadToken || plan.cancelledByRider {
            script.append((last, ended(who, at: last, content: final, policy: "immediate")))
        } else {
            let p = Push(event: "end", priority: 10, token: who.token, timestamp: last, content: final,
                         dismissalDate: last + plan.dismissAfter)
            script.append((last, push(who, at: last, p)))
            if let after = plan.pushAfterEnd {
                last += after
                let q = Push(priority: 5, token: who.token, timestamp: last, content: final)
                script.append((last, push(who, at: last, q)))
            }
        }
        if plan.duplicateReport, let copy = script.dropFirst().first {
            script.append((copy.time + random.double(1...3), copy.event))
        }
        add(script)
    }
}
