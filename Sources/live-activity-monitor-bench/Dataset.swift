import Foundation

/// The events the bench ingests, as NDJSON lines: activities of the ride app
/// (`LiveActivityAttributes`) and the timer app (`TimerWidgetAttributes`), each started and
/// then updated by pushes. The same shapes as the wrk scripts in `Tests/bench/`.
struct Dataset {
    /// How its ids look, and so where new ones fall among the stored ones in SQLite's indexes.
    enum IDs {
        /// As production's: activity ids random UUIDs in upper case, bare (ActivityKit's are),
        /// bookings too, so each new one lands anywhere in its index; event ids time-ordered UUIDs
        /// (version 7, as `LiveActivityReporter` makes them), each beside the last.
        case uuids
        /// The prefix and a number, each new id beside the last in every index (the bench's
        /// ids until session 31; kept to compare with its figures).
        case numbered
    }

    /// Prefix of every id, so that several datasets can share one database: at most two ASCII
    /// characters (`uuidSpace`).
    let prefix: String
    /// Unix seconds the bench started: live activities start shortly before it.
    let now: Double
    var ids = IDs.numbered

    func activityID(_ i: Int) -> String { ids == .numbered ? "\(prefix)a\(i)" : Self.randomUUID(i, kind: uuidSpace << 1) }
    func bookingID(_ i: Int) -> String { ids == .numbered ? "\(prefix)BK\(i)" : Self.randomUUID(i, kind: uuidSpace << 1 | 1) }
    func startEventID(_ i: Int) -> String { ids == .numbered ? "\(prefix)s\(i)" : prefix + Self.timeOrderedUUID(i, 0) }
    /// The `k`-th push's (k from 1 to 1023).
    func pushEventID(_ i: Int, _ k: Int) -> String { ids == .numbered ? "\(prefix)p\(i)-\(k)" : prefix + Self.timeOrderedUUID(i, k) }

    /// The prefix as a number below 2^14 (7 bits a character), which a bare UUID carries in its
    /// mixed bits instead of the text: the datasets' activity and booking ids stay distinct.
    private var uuidSpace: Int {
        precondition(prefix.utf8.count <= 2 && prefix.utf8.allSatisfy { $0 < 0x80 }, "a prefix of up to 2 ASCII characters")
        return prefix.utf8.reduce(0) { $0 << 7 | Int($1) }
    }

    /// Shaped as a UUID and random-looking (its digits all mixed, no version digit kept),
    /// distinct for each `(i, kind)` (i below 2^48, kind below 2^16): its first 64 bits are a
    /// bijective mix of both, unrelated to i's order.
    static func randomUUID(_ i: Int, kind: Int) -> String {
        let high = mix(UInt64(i) | UInt64(kind) << 48)
        return uuid(high, mix(high ^ 0x5851_F42D_4C95_7F2D))
    }

    /// Shaped as a version 7 UUID whose 48-bit time is the line's place (activity `i`, then its
    /// event `k`): each later line's id sorts after the earlier ones'.
    static func timeOrderedUUID(_ i: Int, _ k: Int) -> String {
        let place = UInt64(i) << 10 | UInt64(k), random = mix(place)
        return uuid(place << 16 | 0x7000 | random >> 52, random >> 2 | 1 << 63)
    }

    /// The UUID of these 16 bytes (big-endian), in Foundation's text: upper case, as ActivityKit's.
    private static func uuid(_ high: UInt64, _ low: UInt64) -> String {
        var bytes = UUID().uuid
        withUnsafeMutableBytes(of: &bytes) { out in
            withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { out.copyMemory(from: $0) }
        }
        return UUID(uuid: bytes).uuidString
    }

    /// SplitMix64's finalizer: xor-shifts and odd multiplications, each invertible.
    private static func mix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

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
                {"id":"\(startEventID(i))","type":"activity.started","activity_id":"\(activityID(i))","booking_id":"\(bookingID(i))",\
                "attributes_type":"LiveActivityAttributes","occurred_at":\(t),"app":"com.example.rides",\
                "attributes":{"driverName":"Ana","rating":"4.9"},\
                "content_state":{"driverName":"Ana","rating":"4.9","progress":0,"duration":12},\
                "stale_date":\(t + 4 * 3600),"relevance_score":\(Double(i % 100) / 100),"push_token":"\(Self.token(i))"}
                """
        }
        return """
            {"id":"\(startEventID(i))","type":"activity.started","activity_id":"\(activityID(i))","booking_id":"\(bookingID(i))",\
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
            {"id":"\(pushEventID(i, k))","type":"push.sent","activity_id":"\(activityID(i))","occurred_at":\(t),\
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
