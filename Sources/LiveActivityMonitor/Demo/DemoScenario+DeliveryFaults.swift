import JSON

/// The faults that APNs answers 200 to and only the phone reveals (issue 21), each within the
/// demo's first seconds so that the triage view, the warnings and the delivery panels have
/// something to show: a release that changed the content-state on the backend (a number where
/// the app sends a string, a key missing), a timestamp in milliseconds that freezes a card, a
/// push the phone never showed (its own report says so), a start push that started nothing
/// and one sent to a push-to-start token the device had replaced, and strange values recorded
/// with warnings (a payload over 4 KB, a stale date in the past, a reason APNs never gave).
extension DemoScenario {
    mutating func scheduleDeliveryFaults() {
        let s = start
        scheduleUndecodableRide(at: s + 0.2)
        scheduleFrozenRide(at: s + 0.3)
        scheduleMissedDelivery(at: s + 0.4)
        scheduleStartPushFaults(at: s + 0.5)
    }

    private mutating func rideStart(at t: Double, progress: Double = 0.1, eta: Int = 9) -> (DemoIdentity, JSONValue, JSONObject) {
        let who = newIdentity(app: Self.rideApp)
        let content = Self.rideContent(driver: random.pick(Self.drivers), rating: "4.8", progress: progress, eta: eta)
        let start = started(who, type: Self.rideType, at: t, content: content,
                            attributes: .object(Self.object([("name", .string("Live Activity"))])),
                            staleDate: t + 900, relevance: 100, token: who.token)
        return (who, content, start)
    }

    /// `content` with `key` set to `value` (nil: left out).
    private static func changing(_ content: JSONValue, _ key: String, to value: JSONValue?) -> JSONValue {
        guard case .object(let o) = content else { return content }
        return .object(JSONObject(o.entries.compactMap { $0.key == key ? value.map { (key, $0) } : ($0.key, $0.value) }))
    }

    /// A backend release sends `rating` as a number and then drops `duration`: the phone keeps
    /// the first card; a correct push later would put it right, but this ride ends first.
    private mutating func scheduleUndecodableRide(at t: Double) {
        let (who, content, start) = rideStart(at: t)
        let numberRating = Self.changing(content, "rating", to: .number(JSONNumber(4.8)))
        let noDuration = Self.changing(content, "duration", to: nil)
        add([(t, start),
             (t + 0.6, push(who, at: t + 0.6, Push(priority: 10, token: who.token, timestamp: t + 0.6, content: numberRating,
                                                   staleDate: t + 900))),
             (t + 1.4, push(who, at: t + 1.4, Push(priority: 10, token: who.token, timestamp: t + 1.4, content: noDuration,
                                                   staleDate: t + 900))),
             (t + 600, push(who, at: t + 600, Push(event: "end", priority: 10, token: who.token, timestamp: t + 600,
                                                   content: content, dismissalDate: t + 630)))])
    }

    /// One push stamped in milliseconds: applied (numerically the newest), and every correct
    /// update after it is out of order until the ride ends.
    private mutating func scheduleFrozenRide(at t: Double) {
        let (who, _, start) = rideStart(at: t)
        var script = [(time: t, event: start)]
        let driver = "Kenji"
        for (i, dt) in [0.5, 1.2, 2.0, 2.8].enumerated() {
            let content = Self.rideContent(driver: driver, rating: "4.7", progress: 0.2 + 0.2 * Double(i), eta: 8 - 2 * i)
            let stamp = i == 0 ? (t + dt) * 1000 : t + dt
            script.append((t + dt, push(who, at: t + dt, Push(token: who.token, timestamp: stamp, content: content))))
        }
        script.append((t + 480, ended(who, at: t + 480, content: nil, policy: "immediate")))
        add(script)
    }

    /// A push APNs accepted five minutes ago that the phone never showed: the app's report of
    /// what it shows (older content) marks it missed; another ride's report confirms its push.
    private mutating func scheduleMissedDelivery(at t: Double) {
        let t0 = t - 600
        let (who, content, start) = rideStart(at: t0)
        let newer = Self.changing(content, "progress", to: .number(JSONNumber(0.5)))
        add([(t0, start),
             (t0 + 300, push(who, at: t0 + 300, Push(priority: 10, token: who.token, timestamp: t0 + 300, content: newer,
                                                     staleDate: t0 + 1800))),
             (t, observed(who, at: t, content: content)),
             (t + 900, ended(who, at: t + 900, content: nil, policy: "immediate"))])

        let (seen, seenContent, seenStart) = rideStart(at: t)
        let moved = Self.changing(seenContent, "progress", to: .number(JSONNumber(0.4)))
        add([(t, seenStart),
             (t + 0.5, push(seen, at: t + 0.5, Push(token: seen.token, timestamp: t + 0.5, content: moved))),
             (t + 2.1, observed(seen, at: t + 2.1, content: moved)),
             // Strange but possible, recorded with warnings: a payload over 4 KB that this backend
             // says APNs took, a stale date already past, then a reason APNs never gave.
             (t + 2.6, push(seen, at: t + 2.6, Push(token: seen.token, timestamp: t + 2.6, content: moved, staleDate: t - 60,
                                                    extraPayloadBytes: 4200))),
             (t + 3.0, push(seen, at: t + 3.0, Push(status: 400, reason: "ChannelConfigBroken", token: seen.token,
                                                    timestamp: t + 3.0, content: moved))),
             (t + 900, ended(seen, at: t + 900, content: nil, policy: "immediate"))])
    }

    /// Twenty minutes ago a start push went to a booking and nothing started (its 15-minute
    /// window has passed); now another goes to a push-to-start token the device has replaced.
    private mutating func scheduleStartPushFaults(at t: Double) {
        let attributes: JSONValue = .object(Self.object([("name", .string("Live Activity"))]))
        let content = Self.rideContent(driver: "Aisha", rating: "4.9", progress: 0, eta: 12)
        let lost = newIdentity(app: Self.rideApp)
        let past = t - 1200
        let token = ids.hex(bytes: 32)
        let device = "device-" + ids.hex(bytes: 8)
        add([(past - 60, pushToStartToken(lost, device: device, token: token, at: past - 60)),
             (past, push(lost, at: past, Push(event: "start", priority: 10, token: token, timestamp: past, content: content,
                                              alert: ("Your driver is on the way", "Aisha, 12 min"),
                                              attributes: attributes), includeActivityID: false))])

        let stale = newIdentity(app: Self.rideApp)
        let old = ids.hex(bytes: 32), new = ids.hex(bytes: 32)
        let phone = "device-" + ids.hex(bytes: 8)
        add([(t, pushToStartToken(stale, device: phone, token: old, at: t)),
             (t + 0.5, pushToStartToken(stale, device: phone, token: new, at: t + 0.5)),
             (t + 1.0, push(stale, at: t + 1.0, Push(event: "start", status: 200, priority: 10, token: old, timestamp: t + 1.0,
                                                     content: content, alert: ("Your driver is on the way", "Aisha"),
                                                     attributes: attributes), includeActivityID: false))])
    }
}
