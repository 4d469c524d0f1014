import JSON

/// One event the demo will post once the clock reaches `time`.
struct DemoScheduledEvent: Sendable {
    var time: Double
    /// Order of scheduling: breaks ties in `time`, so equal times keep their script order.
    var sequence: Int
    var event: JSONObject
    /// The last event of its activity's script: after it the demo stops tracking the activity.
    var closes: Bool

    func isBefore(_ other: DemoScheduledEvent) -> Bool {
        time != other.time ? time < other.time : sequence < other.sequence
    }
}
