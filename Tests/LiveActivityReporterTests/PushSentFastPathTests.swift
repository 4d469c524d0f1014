import Foundation
import Testing
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// The reporter's `push.sent` events, one per body (alone or in an array), take the monitor's one-object fast path
/// (PushEventScanner) and decode to the same events as through the parser and validator.
struct PushSentFastPathTests {
    static let tree: IngestDecoder = {
        var d = IngestDecoder()
        d.fastPath = false
        return d
    }()

    static var pushes: [LiveActivityEvent] {
        // A start push naming its `push_to_start_token` takes the general path (the scanner
        // keeps one token field): here it names it as `push_token`, which takes the fast path.
        // A broadcast (`channel_id`) takes the general path.
        var events = Samples.everyKind().filter { $0.kind == .pushSent && $0.id != "ev-broadcast" }.map { event in
            guard case .pushSent(var fields) = event.payload, fields.pushToStartToken != nil else { return event }
            fields.pushToStartToken = nil
            var e = event
            e.payload = .pushSent(fields)
            return e
        }
        // Failures: a reason, no answer at all, a low priority, nothing optional.
        events.append(.pushSent(activityID: "A1B2", PushSent(event: .update, status: 410, latencyMs: 8.25,
                                                              pushToken: Samples.token, reason: "Unregistered"),
                                occurredAt: Samples.at(7.5), id: "ev-410"))
        events.append(.pushSent(activityID: "A1B2", PushSent(event: .end, status: 0, latencyMs: 10_000,
                                                              pushToken: Samples.token, priority: .low),
                                occurredAt: Samples.at(8), app: "com.example.ride-backend", id: "ev-0"))
        return events
    }

    @Test func theReportersPushesTakeTheFastPath() throws {
        #expect(Self.pushes.count == 4)
        for push in Self.pushes {
            let object = Array(try push.jsonData())
            // Alone, and as the reporter sends it: an array of the batch's events, here one.
            for body in [object, Array("[".utf8) + object + Array("]".utf8)] {
                let text = String(decoding: body, as: UTF8.self)
                let fast = try #require(IngestDecoder().fastPushEvent(body), "\(text)")
                let events = try Self.tree.decode(body, format: .json)
                #expect(events.count == 1)
                #expect(fast.differences(from: events[0]) == [], "\(text)")
                #expect(fast.key == push.id)
            }
        }
    }
}
