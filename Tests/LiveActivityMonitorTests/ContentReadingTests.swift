import JSON
import Testing
@testable import LiveActivityMonitor

/// The decoder reads each event's content (parse, digest) where it decodes it, off the writer
/// (`ContentReading`); an event that was not decoded (a replay, the demo) is read by the engine
/// itself. Both must come to the same records, verdicts and counters.
@Suite struct ContentReadingTests {
    static let t0 = TestServer.base - 600
    static let type = "RideAttributes"

    static func ride(_ progress: Double, rating: Any = "4.9") -> [String: Any] {
        ["driverName": "Ana", "rating": rating, "progress": progress]
    }

    /// A start that teaches the shape, an update the phone decodes, one it cannot, an
    /// observation of the first (its keys in another order, a number written another way: the
    /// same content by its digest), an app update and an end push with content.
    static var bodies: [JSONValue] {
        [
            JSONValue(["id": "s1", "type": "activity.started", "activity_id": "a1", "booking_id": "BK-1",
                       "attributes_type": type, "occurred_at": t0, "content_state": ride(0.1),
                       "push_token": Scenario.tokenA] as [String: Any]),
            Scenario.push("a1", "p1", at: t0 + 10, content: ride(0.4)),
            Scenario.push("a1", "p2", at: t0 + 20, content: ride(0.5, rating: 4.9)),
            .object(["type": "activity.observed", "activity_id": "a1", "occurred_at": .number(JSONNumber(t0 + 30)),
                     "content_state": .object(["progress": .number(JSONNumber(literal: "0.40")!), "rating": "4.9",
                                               "driverName": "Ana"])]),
            JSONValue(["id": "u1", "type": "activity.updated", "activity_id": "a1", "occurred_at": t0 + 40,
                       "content_state": ride(0.6)] as [String: Any]),
            Scenario.push("a1", "p3", at: t0 + 50, event: "end", content: ride(1.0)),
        ]
    }

    /// Each body decoded alone, as a single-event request is (a push goes the fast path).
    static func decoded() throws -> [Event] {
        try bodies.flatMap { try IngestDecoder().decode($0.jsonBytes, format: .json) }
    }

    struct Applied: Equatable {
        var record: ActivityRecord?
        var counters: MonitorCounters
        var effects: [EventEffect]
        var shapes: ContentShapes
    }

    static func apply(_ events: [Event]) -> Applied {
        var engine = StateEngineEffectTests.Engine()
        let effects = events.map { engine.apply($0) }
        var counters = engine.counters
        engine.pushes.add(to: &counters)
        return Applied(record: engine.record, counters: counters, effects: effects, shapes: engine.shapes)
    }

    @Test func theDecoderReadsEachContent() throws {
        let events = try Self.decoded()
        for event in events {
            let reading = try #require(event.contentReading, "\(event.type)")
            let text = try #require(event.contentState)
            #expect(reading.value == (try JSONParser.parse(text.text)))
            #expect(reading.digest == ContentDigest.of(text))
        }
    }

    @Test func aDecodedEventAndTheSameEventReadByTheEngineComeToTheSameState() throws {
        let decoded = try Self.decoded()
        var replayed = decoded
        for i in replayed.indices { replayed[i].contentReading = nil }
        let fromDecoded = Self.apply(decoded), fromEngine = Self.apply(replayed)
        #expect(fromDecoded == fromEngine)
        // The sequence reaches every content rule: a verdict, a confirmation by digest, an end.
        #expect(fromDecoded.effects.map(\.why) == [nil, nil, .undecodableContent, nil, nil, nil])
        #expect(fromDecoded.record?.delivery.lastConfirmedAt == Self.t0 + 30)
        #expect(fromDecoded.record?.endedAt == Self.t0 + 50)
    }
}
