import Foundation
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// What the typed events put on the wire, checked against the monitor's own decoder in process.
struct EventEncodingTests {
    static func object(_ event: LiveActivityEvent) throws -> [String: JSONContent] {
        try #require(try JSONDecoder().decode(JSONContent.self, from: event.jsonData()).objectValue)
    }

    /// Every sample that sets all its type's fields, with every common field its type may
    /// carry set too (a channel management result names no activity).
    static var fullyPopulated: [LiveActivityEvent] {
        Samples.everyKind().filter { $0.id != "ev-push-start" && $0.id != "ev-broadcast" }.map { event in
            var e = event
            if e.kind.namesActivity {
                e.bookingID = e.bookingID ?? "BK-1042"
                e.attributesType = e.attributesType ?? "LiveActivityAttributes"
            }
            e.app = e.app ?? "com.example.ride"
            return e
        }
    }

    @Test(arguments: fullyPopulated)
    func everyFieldIsOnTheWireWhenSet(_ event: LiveActivityEvent) throws {
        let type = event.kind
        let keys = Set(try Self.object(event).keys)
        // An update push has no use for the start push's own fields (the schema allows them on
        // every push.sent): the start sample carries those (`theStartPushCarriesItsFields`).
        // Nor a broadcast's (`theBroadcastCarriesItsFields`).
        let startOnly: Set = event.kind == .pushSent
            ? ["push_to_start_token", "input_push_channel", "channel_id", "apns_request_id", "expiration"] : []
        #expect(keys == EventSchema.names(allowedOn: EventKinds(type)).subtracting(startOnly))
    }

    @Test func theStartPushCarriesItsFields() throws {
        let start = try #require(Samples.everyKind().first { $0.id == "ev-push-start" })
        let keys = Set(try Self.object(start).keys)
        #expect(keys.isSuperset(of: ["push_to_start_token", "input_push_channel", "attributes", "attributes_type", "booking_id"]))
    }

    @Test func theBroadcastCarriesItsFields() throws {
        let broadcast = try #require(Samples.everyKind().first { $0.id == "ev-broadcast" })
        let keys = Set(try Self.object(broadcast).keys)
        #expect(keys.isSuperset(of: ["channel_id", "apns_request_id", "expiration", "priority"]))
        #expect(!keys.contains("push_token") && !keys.contains("activity_id"))
    }

    @Test func channelResultsOnTheWire() throws {
        let created = LiveActivityEvent.channelCreated(
            ChannelCreated(channelID: "Y2hhbm5lbC1h", status: 201, storagePolicy: .mostRecentMessage, latencyMs: 85.5),
            occurredAt: Samples.at(0), app: "com.example.ride-backend", id: "ch-1")
        #expect(String(decoding: try created.jsonData(), as: UTF8.self)
                == #"{"app":"com.example.ride-backend","channel_id":"Y2hhbm5lbC1h","id":"ch-1","latency_ms":85.5,"occurred_at":"2026-11-18T11:06:40Z","status":201,"storage_policy":1,"type":"channel.created"}"#)
        // Refused: no channel was created, so there is no id.
        let refused = LiveActivityEvent.channelCreated(
            ChannelCreated(channelID: nil, status: 400, reason: "CannotCreateChannelConfig", storagePolicy: .noStorage),
            occurredAt: Samples.at(1.5), id: "ch-2")
        #expect(String(decoding: try refused.jsonData(), as: UTF8.self)
                == #"{"id":"ch-2","occurred_at":"2026-11-18T11:06:41.500Z","reason":"CannotCreateChannelConfig","status":400,"storage_policy":0,"type":"channel.created"}"#)
        let deleted = LiveActivityEvent.channelDeleted(ChannelDeleted(channelID: "Y2hhbm5lbC1h", status: 204, latencyMs: 40),
                                                       occurredAt: Samples.at(60), id: "ch-3")
        #expect(String(decoding: try deleted.jsonData(), as: UTF8.self)
                == #"{"channel_id":"Y2hhbm5lbC1h","id":"ch-3","latency_ms":40,"occurred_at":"2026-11-18T11:07:40Z","status":204,"type":"channel.deleted"}"#)
    }

    /// A channel management result that names an activity, booking or attributes type is not
    /// written: the monitor would refuse it (422, and its batch with it until resent).
    @Test func aChannelResultNamingAnActivityIsNotEncoded() throws {
        for (key, set) in [("activity_id", \LiveActivityEvent.activityID), ("booking_id", \.bookingID),
                           ("attributes_type", \.attributesType)] as [(String, WritableKeyPath<LiveActivityEvent, String?>)] {
            for var event in [LiveActivityEvent.channelCreated(ChannelCreated(channelID: "c", status: 201)),
                              .channelDeleted(ChannelDeleted(channelID: "c", status: 204))] {
                #expect(throws: Never.self) { try event.jsonData() }
                event[keyPath: set] = "A1B2"
                do {
                    _ = try event.jsonData()
                    Issue.record("\(event.kind.rawValue) with \(key) was encoded")
                } catch let EncodingError.invalidValue(_, context) {
                    #expect(context.codingPath.map(\.stringValue) == [key])
                    #expect(context.debugDescription.contains("\(event.kind.rawValue) event names a channel"))
                } catch {
                    Issue.record("wrong error \(error)")
                }
            }
        }
    }

    @Test func theDecoderAcceptsEverySample() throws {
        let body = try JSONEncoder().encode(Samples.everyKind().map { try Self.object($0) })
        let events = try IngestDecoder().decode(Array(body), format: .json)
        #expect(events.map(\.type.rawValue) == Samples.everyKind().map(\.kind.rawValue))
        #expect(events.map(\.key) == Samples.everyKind().map(\.id))
    }

    @Test func unsetFieldsAreLeftOut() throws {
        let event = LiveActivityEvent.stale(activityID: "A1", occurredAt: Samples.at(0), id: "s1")
        let json = String(decoding: try event.jsonData(), as: UTF8.self)
        #expect(json == #"{"activity_id":"A1","id":"s1","occurred_at":"2026-11-18T11:06:40Z","type":"activity.stale"}"#)
    }

    /// A date as the events' encoder writes it (`WireDate.strategy`).
    static func written(_ seconds: Double) throws -> JSONContent {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = WireDate.strategy
        let array = try JSONDecoder().decode([JSONContent].self, from: encoder.encode([Date(timeIntervalSince1970: seconds)]))
        return try #require(array.first)
    }

    @Test func datesAreWrittenAsTheMonitorWritesThem() throws {
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [0, 946_684_800, LiveServer.base, LiveServer.base + 0.001, LiveServer.base + 0.9995,
                                4_102_444_799.999, -1.5, 951_782_400]   // 951_782_400 is 2000-02-29
        for _ in 0..<2000 { values.append(Double.random(in: 0..<4_102_444_800, using: &generator)) }
        for seconds in values {
            let written = try #require(try Self.written(seconds).stringValue, "\(seconds)")
            // The monitor reads it back to the millisecond and echoes the very same text.
            let read = try #require(RFC3339.parse(written), "\(written)")
            #expect(abs(read - seconds) < 0.000_501, "\(seconds) → \(written)")
            #expect(RFC3339.format(read) == written)
        }
        #expect(try Self.written(LiveServer.base + 0.25) == "2026-11-18T11:06:40.250Z")
        #expect(try Self.written(951_782_400) == "2000-02-29T00:00:00Z")
        // Outside years 0000–9999 RFC 3339 has no form: the number of seconds, as the monitor
        // takes and serves it (a timestamp in milliseconds; text would be a 422).
        #expect(try Self.written(1_795_000_100_000) == 1_795_000_100_000)
        #expect(try Self.written(-1e12) == -1_000_000_000_000)
    }

    @Test func aContentStateEncodesAsActivityKitDecodesIt() throws {
        struct TimerState: Codable { var startedAt: Date? }
        let state = try JSONContent(encoding: TimerState(startedAt: Date(timeIntervalSinceReferenceDate: 817_000_000.5)))
        // A default JSONEncoder: Date as seconds since 2001, the form an APNs content-state needs.
        #expect(state == ["startedAt": 817_000_000.5])

        struct RideState: Codable { var driverName: String; var rating: String; var progress: Double; var duration: Int }
        let ride = try JSONContent(encoding: RideState(driverName: "Ana", rating: "4.9", progress: 0.4, duration: 7))
        #expect(ride == Samples.ride)
    }

    @Test func pushTokensNeverShowInDescriptions() throws {
        let token = PushToken(Data([0x80, 0xa1, 0xff, 0x00, 0x12, 0x34, 0x56, 0x78]))
        #expect(token.hex == "80a1ff0012345678")
        var dumped = ""
        dump(token, to: &dumped)
        for text in ["\(token)", String(reflecting: token), dumped] {
            #expect(!text.contains(token.hex), "\(text)")
        }
        for event in Samples.everyKind() {
            var dumpedEvent = ""
            dump(event, to: &dumpedEvent)
            for text in ["\(event)", String(reflecting: event), dumpedEvent] {
                #expect(!text.contains(Samples.token.hex) && !text.contains(Samples.rotatedToken.hex))
            }
        }
        // The wire is the one place it appears.
        let wire = String(decoding: try Samples.everyKind()[1].jsonData(), as: UTF8.self)
        #expect(wire.contains(Samples.rotatedToken.hex))
    }

    /// The ingest token is as secret as a push token: printing the configuration, or a request a
    /// custom transport logs, must not show it.
    @Test func theIngestTokenNeverShowsInDescriptions() throws {
        let secret = "ingest-s3cr3t-0123456789abcdef"
        let configuration = ReporterConfiguration(serverURL: URL(string: "http://127.0.0.1:9464")!, ingestToken: secret)
        let request = TransportRequest(url: configuration.serverURL,
                                       headers: ["Authorization": "Bearer " + secret, "Content-Type": "application/json"])
        for value in [configuration, request] as [Any] {
            var dumped = ""
            dump(value, to: &dumped)
            for text in ["\(value)", String(reflecting: value), dumped] {
                #expect(!text.contains(secret), "\(text)")
                #expect(text.contains("127.0.0.1:9464"), "the rest still shows: \(text)")
            }
        }
        #expect(configuration.ingestToken == secret && request.headers["Authorization"] == "Bearer " + secret)
    }
}
