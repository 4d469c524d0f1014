import JSON

/// A live match updated through a broadcast channel (iOS 18): the scores app's backend creates a
/// channel per match, two dozen fans start an activity subscribed to it, and every update is one
/// broadcast — priority 1 for the clock, priority 10 for a goal — until the final whistle ends
/// them all. Then what goes wrong with channels: the backend deletes the channel and keeps
/// publishing to it, sets an expiration on a channel created to keep no message, and a create
/// that APNs refuses.
extension DemoScenario {
    static let matchType = "MatchAttributes"
    static let matchApp = "com.example.scores"
    static let fansPerMatch = 24

    mutating func scheduleMatch() {
        let t = start + 0.6
        let channel = channelID()
        var script: [(time: Double, event: JSONObject)] = [
            (t, channelRequest("channel.created", channel, at: t, status: 201, storagePolicy: 1)),
        ]
        let attributes = JSONValue.object(Self.object([("homeTeam", .string("Lions")), ("awayTeam", .string("Tigers")),
                                                        ("competition", .string("City Cup"))]))
        for fan in 0..<Self.fansPerMatch {
            let who = newIdentity(app: Self.matchApp)
            let at = t + 0.05 + Double(fan) * 0.02
            var start = started(who, type: Self.matchType, at: at, content: Self.matchContent(0, 0, minute: 1),
                                attributes: attributes, relevance: 80)
            start["channel_id"] = .string(channel)
            script.append((at, start))
        }
        // The clock every 10 s at priority 1 (a demo's match is short); a goal at priority 10; the
        // whistle ends them all.
        var home = 0, away = 0
        for tick in 1...18 {
            let at = t + 2 + Double(tick - 1) * 10
            let goal = tick == 3 || tick == 8 || tick == 14
            if goal { if tick == 8 { away += 1 } else { home += 1 } }
            script.append((at, broadcast(channel, at: at, priority: goal ? 10 : 1,
                                         content: Self.matchContent(home, away, minute: tick * 5))))
        }
        let whistle = t + 2 + 18 * 10
        script.append((whistle, broadcast(channel, at: whistle, event: "end", priority: 10,
                                          content: Self.matchContent(home, away, minute: 90))))
        script.append((whistle + 30, channelRequest("channel.deleted", channel, at: whistle + 30, status: 204)))
        // A backend job that was not told: a broadcast to the deleted channel (APNs still says 200).
        script.append((whistle + 45, broadcast(channel, at: whistle + 45, priority: 10,
                                               content: Self.matchContent(home, away, minute: 90))))
        add(script)

        // A channel created to keep no message, published to with an expiration (a warning).
        let quiet = channelID(), q = t + 2
        var quietScript = [(time: q, event: channelRequest("channel.created", quiet, at: q, status: 201, storagePolicy: 0))]
        var expiring = broadcast(quiet, at: q + 1, priority: 5, content: Self.matchContent(0, 0, minute: 1))
        expiring["expiration"] = .number(JSONNumber(Int(q + 3600)))
        quietScript.append((q + 1, expiring))
        // A create APNs refused: no channel id comes back.
        var refused = channelRequest("channel.created", nil, at: q + 2, status: 400, storagePolicy: 1)
        refused["reason"] = .string("CannotCreateChannelConfig")
        quietScript.append((q + 2, refused))
        // A promotion's channel deleted at once, and still published to by a forgotten job.
        let flash = channelID()
        quietScript += [(q, channelRequest("channel.created", flash, at: q, status: 201, storagePolicy: 1)),
                        (q + 1.5, channelRequest("channel.deleted", flash, at: q + 1.5, status: 204)),
                        (q + 2.5, broadcast(flash, at: q + 2.5, priority: 10, content: Self.matchContent(0, 0, minute: 1)))]
        add(quietScript)
    }

    /// The match's content-state: the score, and the minute of play.
    static func matchContent(_ home: Int, _ away: Int, minute: Int) -> JSONValue {
        .object(object([("homeScore", .number(JSONNumber(home))), ("awayScore", .number(JSONNumber(away))),
                        ("minute", .number(JSONNumber(minute)))]))
    }

    /// An id as APNs gives one: 16 random bytes, base64.
    private mutating func channelID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        return String((0..<22).map { _ in alphabet[ids.int(0...63)] }) + "=="
    }

    private mutating func channelRequest(_ type: String, _ channel: String?, at t: Double, status: Int,
                                         storagePolicy: Int? = nil) -> JSONObject {
        Self.object([
            ("id", .string(nextEventID())), ("type", .string(type)), ("occurred_at", Self.time(t)),
            ("app", .string(Self.matchApp)), ("channel_id", channel.map(JSONValue.string)),
            ("status", .number(JSONNumber(status))), ("storage_policy", storagePolicy.map { .number(JSONNumber($0)) }),
            ("latency_ms", .number(JSONNumber((random.double(30...120) * 10).rounded() / 10))),
        ])
    }

    private mutating func broadcast(_ channel: String, at t: Double, event: String = "update", priority: Int,
                                    content: JSONValue) -> JSONObject {
        Self.object([
            ("id", .string(nextEventID())), ("type", .string("push.sent")), ("occurred_at", Self.time(t)),
            ("app", .string(Self.matchApp)), ("channel_id", .string(channel)), ("event", .string(event)),
            ("priority", .number(JSONNumber(priority))), ("status", .number(JSONNumber(200))),
            ("latency_ms", .number(JSONNumber((random.logNormal(median: 60, sigma: 0.5) * 10).rounded() / 10))),
            ("apns_request_id", .string(ids.uuid())), ("timestamp", Self.time(t)), ("content_state", content),
            ("dismissal_date", event == "end" ? Self.time(t + 300) : nil),
        ])
    }
}
