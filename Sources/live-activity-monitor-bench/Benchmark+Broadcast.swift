import Foundation
import HTTPServer

/// Issue 22: a 200 broadcast is one event taken by every subscribed activity in one commit, and
/// answered once durable. Timed POST by POST on one keep-alive connection, alternating with a
/// broadcast to a channel nobody is subscribed to (the same request, the same path, without
/// the subscribers' share), so that both figures come from the same minutes of the machine.
extension Benchmark {
    func broadcasts() throws {
        let server = try monitor("monitor-broadcast", database: "broadcast.sqlite")
        defer { stop(server) }
        let data = Dataset(prefix: "bc", now: unixNow)
        let subscribers = options.broadcastSubscribers
        let channel = "YmVuY2gtY2hhbm5lbA==", empty = "ZW1wdHktY2hhbm5lbA=="
        try Populator(port: server.port).post(batches: (subscribers + 999) / 1000) { j in
            // Odd numbers: the timer app's activities, whose content the broadcasts carry.
            (j * 1000..<min(j * 1000 + 1000, subscribers)).map { i in
                String(data.start(2 * i + 1, age: 1800).dropLast()) + ",\"channel_id\":\"\(channel)\"}"
            }
        }
        server.waitUntilIdle()
        let client = HTTPClient(port: server.port, timeoutSeconds: 60)
        defer { client.close() }
        var sequence = 0
        func post(to channelID: String) throws -> Double {
            sequence += 1
            let t = unixNow - 1700 + Double(sequence)
            let body = """
                {"id":"bc-\(sequence)","type":"push.sent","channel_id":"\(channelID)","occurred_at":\(t),"event":"update",\
                "priority":1,"status":200,"latency_ms":40,"timestamp":\(t),"content_state":{"elapsed":\(sequence),"paused":false}}
                """
            let (seconds, response) = try Stopwatch.time {
                try client.request("POST", "/v1/events", headers: [("Content-Type", "application/json")], body: Array(body.utf8))
            }
            guard response.status == 200 else { throw BenchError("broadcast: \(response.status) \(response.text.prefix(300))") }
            return seconds * 1000
        }
        var full: [Double] = [], none: [Double] = []
        for round in 1...options.rounds {
            var a: [Double] = [], b: [Double] = []
            for _ in 0..<5 {
                a.append(try post(to: channel))
                b.append(try post(to: empty))
            }
            full.append(Stats.median(a))
            none.append(Stats.median(b))
            log("round \(round): broadcast to \(subscribers) subscribers \(Results.format(full.last!)) ms, "
                + "to none \(Results.format(none.last!)) ms")
        }
        // Every subscriber took the last broadcast (its content), as the API shows it.
        let shown = try HTTPProbe.text(port: server.port, path: "/api/activities/\(data.activityID(2 * subscribers - 1))")
        guard shown.contains("\"elapsed\":\(sequence - 1),") else {
            throw BenchError("broadcast: the last subscriber does not show the last broadcast: \(shown.prefix(400))")
        }
        results.add("broadcast_subscribers", "a 200 broadcast to \(subscribers) subscribers, until answered", "ms", full)
        results.add("broadcast_none", "a 200 broadcast to a channel without subscribers", "ms", none)
    }
}
