import Foundation
import Testing
import JSON

/// Throughput against Foundation on realistic ingest batches. Only with LAM_BENCH=1
/// (otherwise reported as skipped); run with `-c release` for meaningful figures.
@Test(.enabled(if: ProcessInfo.processInfo.environment["LAM_BENCH"] == "1", "benchmark: set LAM_BENCH=1 to run"))
func parseThroughputAgainstFoundation() throws {
    let batch = realisticEventBatch(targetBytes: 1_000_000)
    let lines = batch.split(separator: 0x0A)
    let megabytes = Double(batch.count) / 1_000_000
    let rounds = 20

    // Same result shape first, so the two parsers do comparable work.
    let ours = JSONParser.parseLines(batch)
    #expect(ours.count == lines.count)
    for entry in ours { _ = try entry.result.get() }

    let oursLines = medianSeconds(rounds: rounds) {
        let results = JSONParser.parseLines(batch)
        precondition(results.count == lines.count)
    }
    let foundationLines = try medianSeconds(rounds: rounds) {
        var count = 0
        for line in batch.split(separator: 0x0A) {
            _ = try JSONSerialization.jsonObject(with: Data(line))
            count += 1
        }
        precondition(count == lines.count)
    }

    // The same events as one JSON array (the application/json body form).
    let array = Array(("[" + lines.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ",") + "]").utf8)
    let oursArray = try medianSeconds(rounds: rounds) {
        _ = try JSONParser.parse(array, limits: { var l = JSONParser.Limits(); l.maxContainerCount = 1_000_000; return l }())
    }
    let foundationArray = try medianSeconds(rounds: rounds) {
        _ = try JSONSerialization.jsonObject(with: Data(array))
    }

    // Writing the parsed events back.
    let values = try JSONParser.parse(array, limits: { var l = JSONParser.Limits(); l.maxContainerCount = 1_000_000; return l }())
    let writing = medianSeconds(rounds: rounds) {
        var writer = JSONWriter(capacity: array.count)
        writer.write(values)
        precondition(writer.bytes.count == array.count)
    }

    func report(_ name: String, _ seconds: Double) -> String {
        let rate = megabytes / seconds
        let events = Double(lines.count) / seconds
        return "\(name): \(format(rate)) MB/s, \(format(events / 1_000)) k events/s (median \(format(seconds * 1_000)) ms)"
    }
    print("""
    JSON benchmark: \(lines.count) events, \(batch.count) bytes, median of \(rounds) rounds
      \(report("JSONParser.parseLines (NDJSON)      ", oursLines))
      \(report("JSONSerialization per line (NDJSON)", foundationLines))
      \(report("JSONParser.parse (one array)        ", oursArray))
      \(report("JSONSerialization (one array)      ", foundationArray))
      \(report("JSONWriter.write (one array)        ", writing))
    """)
}

private func medianSeconds(rounds: Int, _ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    var samples: [Double] = []
    for _ in 0..<rounds {
        let elapsed = try clock.measure(body)
        samples.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    samples.sort()
    return samples[samples.count / 2]
}

private func format(_ value: Double) -> String {
    String(format: "%.1f", value)
}

/// NDJSON events shaped like DESIGN.md section 3: push results, updates, starts, ends, token
/// updates, with content states of a timer app and a ride app.
private func realisticEventBatch(targetBytes: Int) -> [UInt8] {
    var generator = SeededGenerator(seed: 42)
    var writer = JSONWriter(capacity: targetBytes + 4_096)
    var n = 0
    let drivers = ["Ana", "Bruno", "Chloé", "Dmitri", "Eun-ji", "Fatima"]
    let reasons = ["BadDeviceToken", "Unregistered", "TooManyRequests", "ExpiredToken"]
    while writer.bytes.count < targetBytes {
        n += 1
        let activity = "A\(Int.random(in: 1...5_000, using: &generator))"
        let timestamp = 1_795_960_000 + n
        let kind = Int.random(in: 0..<10, using: &generator)
        writer.beginObject()
        writer.key("id"); writer.string("evt-\(n)-\(UInt32.random(in: 0 ... .max, using: &generator))")
        switch kind {
        case 0..<5: writer.key("type"); writer.string("push.sent")
        case 5..<8: writer.key("type"); writer.string("activity.updated")
        case 8: writer.key("type"); writer.string("activity.started")
        default: writer.key("type"); writer.string("activity.token_updated")
        }
        writer.key("activity_id"); writer.string(activity)
        writer.key("booking_id"); writer.string("BK-\(Int.random(in: 1_000...9_999, using: &generator))")
        writer.key("occurred_at"); writer.string("2026-11-29T14:\(10 + n % 50):\(10 + n % 49)Z")
        writer.key("app"); writer.string(n % 2 == 0 ? "com.example.rides" : "com.example.timers")
        if kind < 5 {
            let status = [200, 200, 200, 200, 410, 429, 400][Int.random(in: 0..<7, using: &generator)]
            writer.key("event"); writer.string(["start", "update", "update", "end"][Int.random(in: 0..<4, using: &generator)])
            writer.key("priority"); writer.number(Bool.random(using: &generator) ? 10 : 5)
            writer.key("status"); writer.number(status)
            writer.key("latency_ms"); writer.number(Double(Int.random(in: 5...900, using: &generator)) / 10)
            writer.key("push_token"); writer.string((0..<32).map { _ in String(UInt8.random(in: 0...255, using: &generator), radix: 16) }.joined())
            writer.key("apns_id"); writer.string("8F3C2E1A-\(Int.random(in: 1_000...9_999, using: &generator))-4B5C-9D0E-1F2A3B4C5D6E")
            writer.key("payload_bytes"); writer.number(Int.random(in: 180...3_900, using: &generator))
            if status != 200 { writer.key("reason"); writer.string(reasons.randomElement(using: &generator)) }
            writer.key("timestamp"); writer.number(timestamp)
        }
        if kind < 9 {
            writer.key("content_state")
            writer.beginObject()
            if n % 2 == 0 {
                writer.key("driverName"); writer.string(drivers.randomElement(using: &generator))
                writer.key("rating"); writer.string("4.\(Int.random(in: 0...9, using: &generator))")
                writer.key("progress"); writer.number(Double(Int.random(in: 0...100, using: &generator)) / 100)
                writer.key("duration"); writer.number(Int.random(in: 1...45, using: &generator))
                writer.key("eta"); writer.string("Arriving in \(Int.random(in: 1...20, using: &generator)) min — \"fast\" <route>")
            } else {
                writer.key("endsAt"); writer.number(Double(timestamp) + 600.5)
                writer.key("paused"); writer.bool(Bool.random(using: &generator))
                writer.key("label"); writer.string("Tea ☕️")
                writer.key("laps"); writer.beginArray()
                for _ in 0..<Int.random(in: 0...3, using: &generator) { writer.number(Int.random(in: 10...99, using: &generator)) }
                writer.endArray()
            }
            writer.endObject()
            writer.key("stale_date"); writer.number(timestamp + 900)
            writer.key("relevance_score"); writer.number(0.75)
        }
        if kind == 8 {
            writer.key("attributes_type"); writer.string(n % 2 == 0 ? "RideAttributes" : "TimerWidgetAttributes")
            writer.key("attributes"); writer.write(["orderNumber": .string("ORD-\(n)"), "venue": "Main St. & 5th"])
        }
        writer.endObject()
    }
    return writer.bytes + [0x0A]
}
