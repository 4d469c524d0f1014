import Foundation

/// The events the bench ingests, as NDJSON lines: activities of the ride app
/// (`LiveActivityAttributes`) and the timer app (`TimerWidgetAttributes`), each started and
/// then updated by pushes. The same shapes as the wrk scripts in `Tests/bench/`.
struct Dataset {
    /// Prefix of every id, so that several datasets can share one database.
    let prefix: String
    /// Unix seconds the bench started: live activities start shortly before it.
    let now: Double

    func activityID(_ i: Int) -> String { "\(prefix)a\(i)" }
    func bookingID(_ i: Int) -> String { "\(prefix)BK\(i)" }

    /// The token the wrk scripts use for activity `i` (`%064x` of i + 1).
    static func token(_ i: Int) -> String {
        let hex = String(i + 1, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    /// `activity.started` for activity `i`, `age` seconds ago (an age over 12 h makes it history:
    /// ended and dismissed as soon as it is stored).
    func start(_ i: Int, age: Double) -> String {
        let t = now - age
        if i % 2 == 0 {
            return """
                {"id":"\(prefix)s\(i)","type":"activity.started","activity_id":"\(activityID(i))","booking_id":"\(bookingID(i))",\
                "attributes_type":"LiveActivityAttributes","occurred_at":\(t),"app":"com.example.rides",\
                "attributes":{"driverName":"Ana","rating":"4.9"},\
                "content_state":{"driverName":"Ana","rating":"4.9","progress":0,"duration":12},\
                "stale_date":\(t + 4 * 3600),"relevance_score":\(Double(i % 100) / 100),"push_token":"\(Self.token(i))"}
                """
        }
        return """
            {"id":"\(prefix)s\(i)","type":"activity.started","activity_id":"\(activityID(i))","booking_id":"\(bookingID(i))",\
            "attributes_type":"TimerWidgetAttributes","occurred_at":\(t),"app":"com.example.timer",\
            "attributes":{"startedAt":\(Int(t))},"content_state":{"elapsed":0,"paused":false},\
            "relevance_score":\(Double(i % 100) / 100),"push_token":"\(Self.token(i))"}
            """
    }

    /// The `k`-th `push.sent` update (k ≥ 1) for activity `i` started `age` seconds ago: one a minute.
    func push(_ i: Int, _ k: Int, age: Double) -> String {
        let t = now - age + Double(k) * 60
        let priority = k % 4 == 0 ? 5 : 10
        let content = i % 2 == 0
            ? "{\"driverName\":\"Ana\",\"rating\":\"4.9\",\"progress\":\(Double(k) / 10),\"duration\":\(12 - k)}"
            : "{\"elapsed\":\(k * 60),\"paused\":false}"
        return """
            {"id":"\(prefix)p\(i)-\(k)","type":"push.sent","activity_id":"\(activityID(i))","occurred_at":\(t),\
            "event":"update","priority":\(priority),"status":200,"latency_ms":\(20 + (i + k) % 60).5,\
            "push_token":"\(Self.token(i))","timestamp":\(t),"payload_bytes":212,\
            "apns_id":"0e8b5a3c-6f0d-4d7e-9a51-\(String(format: "%012d", i * 16 + k))","content_state":\(content)}
            """
    }

    /// Activity `i` whole: its start and `pushes` updates.
    func activity(_ i: Int, pushes: Int, age: Double) -> [String] {
        [start(i, age: age)] + (0..<pushes).map { push(i, $0 + 1, age: age) }
    }

    /// One line in the shape of `Tests/bench/ndjson-batch.lua`'s events (for the storage baseline).
    static func wrkEvent(run: String, counter: Int, activityPrefix: String, activities: Int, base: Double) -> String {
        let tid = 1
        let a = (counter * 7919 + tid * 104729) % activities
        let t = base + Double(counter) * 0.0001
        let tText = String(format: "%.4f", t)
        return """
            {"id":"\(run)-\(tid)-\(counter)","type":"push.sent","activity_id":"\(activityPrefix)\(a)","occurred_at":\(tText),\
            "event":"update","priority":\(counter % 4 == 0 ? 5 : 10),"status":200,"latency_ms":\(20 + counter % 60).0,\
            "push_token":"\(token(a))","timestamp":\(tText),"payload_bytes":212,\
            "apns_id":"0e8b5a3c-6f0d-4d7e-9a51-\(String(format: "%012d", counter))",\
            "content_state":{"driverName":"Ana","rating":"4.9","progress":\(String(format: "%.2f", Double(counter % 100) / 100)),"duration":\(counter % 30)}}
            """
    }
}
