import Foundation
import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// Delivery evidence and the push-to-start funnel (DESIGN.md section 4) against the real server:
/// what survives a restart, what time alone decides on a moved clock, the flags that set the
/// windows, and that the read API's replay says what the writer counted.
@Suite(.serialized)
struct DeliveryAndPushToStartTests {
    static let t0 = TestServer.base
    static let type = "LiveActivityAttributes"
    static let tokenA = String(repeating: "c2", count: 32), tokenB = String(repeating: "d3", count: 32)
    static let updateToken = String(repeating: "b1", count: 32)

    static func content(_ progress: Double) -> JSONValue {
        ["driverName": "Ana", "rating": "4.9", "progress": .number(JSONNumber(progress)), "duration": 7]
    }

    static func startPush(_ booking: String, at t: Double, token: String = tokenA, field: String = "push_token",
                          id: String? = nil) -> JSONValue {
        var o: JSONObject = ["type": "push.sent", "booking_id": .string(booking), "attributes_type": .string(type),
                             "occurred_at": .number(JSONNumber(t)), "event": "start", "status": 200, "latency_ms": 50,
                             "content_state": content(0), "alert": ["title": "Driver assigned", "body": "Ana"]]
        o[field] = .string(token)
        if let id { o["id"] = .string(id) }
        return .object(o)
    }

    static func started(_ activity: String, _ booking: String, at t: Double, source: String = "push_to_start",
                        type: String = type) -> JSONValue {
        .object(["type": "activity.started", "activity_id": .string(activity), "booking_id": .string(booking),
                 "attributes_type": .string(type), "occurred_at": .number(JSONNumber(t)), "content_state": content(0),
                 "push_token": .string(updateToken), "source": .string(source)])
    }

    static func deviceToken(_ device: String, _ token: String, at t: Double) -> JSONValue {
        .object(["type": "device.push_to_start_token", "device_id": .string(device), "attributes_type": .string(type),
                 "push_token": .string(token), "occurred_at": .number(JSONNumber(t))])
    }

    static func update(_ activity: String, at t: Double, progress: Double) -> JSONValue {
        .object(["type": "push.sent", "activity_id": .string(activity), "occurred_at": .number(JSONNumber(t)),
                 "event": "update", "status": 200, "latency_ms": 40, "push_token": .string(updateToken),
                 "content_state": content(progress)])
    }

    static func observed(_ activity: String, at t: Double, progress: Double) -> JSONValue {
        .object(["type": "activity.observed", "activity_id": .string(activity), "occurred_at": .number(JSONNumber(t)),
                 "content_state": content(progress)])
    }

    /// The effect of the booking's events of `type` (in time order), as the read API replays them.
    static func effects(_ server: TestServer, booking: String, type: String = "push.sent") throws -> [JSONValue] {
        let events = try server.json("/api/bookings/\(booking)")["events"]?.arrayValue ?? []
        return events.filter { $0["type"]?.stringValue == type }.compactMap { $0["effect"] }
    }

    static func outcomes(_ server: TestServer) throws -> (started: Double?, notStarted: Double?) {
        (try server.metric(#"liveactivity_push_to_start_total{outcome="started"}"#),
         try server.metric(#"liveactivity_push_to_start_total{outcome="not_started"}"#))
    }

    // MARK: Ingest

    /// The fields each new type requires, and the start push's two ways to name its token.
    @Test func theNewFieldsAreTheSchemas() throws {
        func fields(_ text: String) throws -> [String] {
            guard case .invalid(let errors) = EventValidator.validate(try JSONParser.parse(text), index: 0) else { return [] }
            return errors.map(\.field)
        }
        #expect(try fields(#"{"type":"device.push_to_start_token","occurred_at":1800000000}"#)
                == ["attributes_type", "push_token", "device_id"])
        #expect(try fields(#"{"type":"device.push_to_start_token","occurred_at":1800000000,"device_id":"d","attributes_type":"T","push_token":"a1a1a1a1a1a1a1a1"}"#) == [])
        #expect(try fields(#"{"type":"activity.observed","occurred_at":1800000000}"#) == ["activity_id", "content_state"])
        #expect(try fields(#"{"type":"activity.observed","activity_id":"a","occurred_at":1800000000,"content_state":{},"timestamp":1800000000}"#)
                == ["timestamp"])
        let start = #"{"type":"push.sent","event":"start","booking_id":"B","occurred_at":1800000000,"status":200,"latency_ms":1"#
        #expect(try fields(start + "}") == ["push_token"])
        #expect(try fields(start + #","push_to_start_token":"zz"}"#) == ["push_to_start_token"])
        #expect(try fields(start + #","push_to_start_token":"a1a1a1a1a1a1a1a1","input_push_channel":"ch"}"#) == [])
        // The token it went to is the push-to-start token, kept as a fingerprint only.
        guard case .valid(let event) = EventValidator.validate(
            try JSONParser.parse(start + #","push_token":"b2b2b2b2b2b2b2b2","push_to_start_token":"a1a1a1a1a1a1a1a1"}"#), index: 0)
        else { Issue.record("refused"); return }
        #expect(event.tokenFingerprint == TokenFingerprint.of("a1a1a1a1a1a1a1a1"))
        #expect(!event.body.contains("a1a1a1a1a1a1a1a1") && event.body.contains("push_to_start_token_fingerprint"))
        let back = try #require(EventValidator.stored(body: event.body, key: nil, bookingID: "B", occurredAt: event.occurredAt))
        #expect(back.tokenFingerprint == event.tokenFingerprint)
    }

    // MARK: Push-to-start across a restart

    @Test func aStartPushBeforeARestartIsStartedByItsActivityAfterIt() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.startPush("BK-1", at: Self.t0)]).status == 200)
        #expect(try Self.effects(server, booking: "BK-1").first?["start"] == "waiting")
        try server.restart()
        server.time.set(Self.t0 + 60)
        #expect(try server.post(events: [Self.started("A1", "BK-1", at: Self.t0 + 45)]).status == 200)
        let (started, notStarted) = try Self.outcomes(server)
        #expect(started == 1 && notStarted == 0)
        #expect(try server.metric("liveactivity_push_to_start_seconds_sum") == 45)
        // Long after the window: still started, counted once.
        server.time.set(Self.t0 + 3600)
        #expect(try Self.outcomes(server) == (1, 0))
        #expect(try Self.effects(server, booking: "BK-1").first?["start"] == "started")
    }

    @Test func aStartPushWhoseWindowPassesAfterARestartIsNotStarted() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.startPush("BK-2", at: Self.t0)]).status == 200)
        try server.restart()
        server.time.set(Self.t0 + 899)
        #expect(try Self.outcomes(server) == (0, 0))
        #expect(try Self.effects(server, booking: "BK-2").first?["start"] == "waiting")
        // Time alone decides: the moved clock sweeps.
        server.time.set(Self.t0 + 901)
        #expect(try Self.outcomes(server) == (0, 1))
        #expect(try Self.effects(server, booking: "BK-2").first?["start"] == "not_started")
        // A start reported after the window changes nothing.
        #expect(try server.post(events: [Self.started("A2", "BK-2", at: Self.t0 + 800)]).status == 200)
        #expect(try Self.outcomes(server) == (0, 1))
        #expect(try Self.effects(server, booking: "BK-2").first?["start"] == "not_started")
        try server.restart()
        #expect(try Self.outcomes(server) == (0, 1))
    }

    @Test func onlyAStartOfTheSameBookingAndTypeWithinTheWindowCounts() throws {
        let server = try TestServer()
        defer { server.stop() }
        let other = Self.started("A3", "BK-3", at: Self.t0 + 10, type: "TimerWidgetAttributes")
        let events = [Self.startPush("BK-3", at: Self.t0), Self.started("A4", "BK-4", at: Self.t0 + 5),
                      other, Self.started("A5", "BK-3", at: Self.t0 + 20, source: "app")]
        #expect(try server.post(events: events).status == 200)
        #expect(try Self.outcomes(server) == (0, 0))
        #expect(try server.post(events: [Self.started("A6", "BK-3", at: Self.t0 + 30)]).status == 200)
        #expect(try Self.outcomes(server) == (1, 0))
    }

    /// Reported long after (an import, a backlog), a push and its start in one request are
    /// judged by when they occurred: the start must fall in the push's window.
    @Test func aRequestHoldingAPushAndItsStartIsJudgedByTheirTimes() throws {
        let server = try TestServer()
        defer { server.stop() }
        let events = [Self.startPush("BK-L", at: Self.t0 - 3000), Self.started("AL", "BK-L", at: Self.t0 - 2990),
                      Self.startPush("BK-M", at: Self.t0 - 3000), Self.started("AM", "BK-M", at: Self.t0 - 2000)]
        #expect(try server.post(events: events).status == 200)
        #expect(try Self.outcomes(server) == (1, 1))
        #expect(try Self.effects(server, booking: "BK-L").first?["start"] == "started")
        #expect(try Self.effects(server, booking: "BK-M").first?["start"] == "not_started")
    }

    // MARK: Push-to-start tokens

    @Test func pushToStartTokensSurviveARestart() throws {
        let server = try TestServer()
        defer { server.stop() }
        let gauge = #"liveactivity_push_to_start_tokens{attributes_type="LiveActivityAttributes"}"#
        let rotations = #"liveactivity_push_to_start_token_rotations_total{attributes_type="LiveActivityAttributes"}"#
        let superseded = #"liveactivity_pushes_without_effect_total{why="superseded_token"}"#
        #expect(try server.post(events: [Self.deviceToken("dev-1", Self.tokenA, at: Self.t0 - 100),
                                         Self.deviceToken("dev-2", Self.tokenB, at: Self.t0 - 100)]).status == 200)
        #expect(try server.metric(gauge) == 2)
        try server.restart()
        #expect(try server.metric(gauge) == 2)
        // The first device's token rotates after the restart: the old one is superseded.
        let newer = String(repeating: "e4", count: 32)
        #expect(try server.post(events: [Self.deviceToken("dev-1", newer, at: Self.t0 - 50)]).status == 200)
        #expect(try server.metric(gauge) == 2)
        #expect(try server.metric(rotations) == 1)
        try server.restart()
        // Named either way, a start push to the superseded token has no effect and starts no funnel.
        #expect(try server.post(events: [Self.startPush("BK-5", at: Self.t0, field: "push_to_start_token"),
                                         Self.startPush("BK-6", at: Self.t0, token: Self.tokenB)]).status == 200)
        #expect(try server.metric(superseded) == 1)
        let effects = try Self.effects(server, booking: "BK-5")
        #expect(effects.first?["why"] == "superseded_token" && effects.first?["start"] == .null)
        #expect(try Self.effects(server, booking: "BK-6").first?["start"] == "waiting")
        // The verdict was kept with the event: a later replay still gives it.
        try server.restart()
        #expect(try Self.effects(server, booking: "BK-5").first?["why"] == "superseded_token")
        server.time.set(Self.t0 + 1000)
        #expect(try Self.outcomes(server) == (0, 1))
        #expect(try server.metric(rotations) == 1)
        #expect(try server.metric(gauge) == 2)
        // No raw token is stored or served.
        let booking = try server.get("/api/bookings/BK-5").text
        #expect(!booking.contains(Self.tokenA) && booking.contains(TokenFingerprint.of(Self.tokenA)))
    }

    // MARK: The flags, with a moved clock

    @Test func theStartWindowIsAFlag() throws {
        let server = try TestServer { $0.engine.startWindow = 60 }
        defer { server.stop() }
        #expect(try server.post(events: [Self.startPush("BK-7", at: Self.t0)]).status == 200)
        server.time.set(Self.t0 + 59)
        #expect(try Self.outcomes(server) == (0, 0))
        server.time.set(Self.t0 + 61)
        #expect(try Self.outcomes(server) == (0, 1))
    }

    @Test func theDeliveryGraceIsAFlag() throws {
        for (grace, missed) in [(120.0, 0.0), (10.0, 1.0)] {
            let server = try TestServer { $0.engine.deliveryGrace = grace }
            defer { server.stop() }
            #expect(try server.post(events: [Self.started("A8", "BK-8", at: Self.t0, source: "app")]).status == 200)
            server.time.set(Self.t0 + 5)
            #expect(try server.post(events: [Self.update("A8", at: Self.t0 + 5, progress: 0.5)]).status == 200)
            server.time.set(Self.t0 + 30)
            // The phone still shows the start's content 25 s after the push.
            #expect(try server.post(events: [Self.observed("A8", at: Self.t0 + 30, progress: 0)]).status == 200)
            #expect(try server.metric(#"liveactivity_push_deliveries_total{outcome="missed"}"#) == missed, "grace \(grace)")
            let activity = try server.json("/api/activities/A8")
            #expect(activity["delivery"]?["missed"] == .number(JSONNumber(missed)))
            let push = activity["events"]?.arrayValue?.first { $0["type"] == "push.sent" }
            #expect(push?["effect"]?["delivery"] == (missed == 1 ? "missed" : .null), "grace \(grace)")
            // The phone's own word either way: the content it shows, which the server knows.
            #expect(activity["content_state"] == Self.content(0))
        }
    }

    // MARK: Delivery evidence

    @Test func anObservationConfirmsThePushItShowsAndEveryEarlierOne() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.started("A9", "BK-9", at: Self.t0, source: "app")]).status == 200)
        server.time.set(Self.t0 + 20)
        #expect(try server.post(events: [Self.update("A9", at: Self.t0 + 10, progress: 0.2),
                                         Self.update("A9", at: Self.t0 + 20, progress: 0.4)]).status == 200)
        server.time.set(Self.t0 + 25)
        // Keys in another order, a number written another way: the same content.
        let shown: JSONValue = .object(["type": "activity.observed", "activity_id": "A9", "occurred_at": .number(JSONNumber(Self.t0 + 25)),
                                        "content_state": ["duration": 7.0, "progress": 0.40, "rating": "4.9", "driverName": "Ana"]])
        #expect(try server.post(events: [shown]).status == 200)
        #expect(try server.metric(#"liveactivity_push_deliveries_total{outcome="confirmed"}"#) == 2)
        #expect(try server.metric("liveactivity_push_delivery_seconds_count") == 2)
        #expect(try server.metric("liveactivity_push_delivery_seconds_sum") == 15 + 5)
        let activity = try server.json("/api/activities/A9")
        #expect(activity["delivery"]?["last_confirmed_at"] == .string(RFC3339.format(Self.t0 + 25)))
        let pushes = (activity["events"]?.arrayValue ?? []).filter { $0["type"] == "push.sent" }
        #expect(pushes.map { $0["effect"]?["delivery"] } == ["confirmed", "confirmed"])
        #expect(pushes.map { $0["effect"]?["delivery_seconds"] } == [15, 5])
        // Seen again: nothing is counted twice.
        server.time.set(Self.t0 + 30)
        #expect(try server.post(events: [Self.observed("A9", at: Self.t0 + 30, progress: 0.4)]).status == 200)
        #expect(try server.metric(#"liveactivity_push_deliveries_total{outcome="confirmed"}"#) == 2)
    }

    @Test func anObservationOfContentNeverSeenChangesNothing() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.started("A10", "BK-10", at: Self.t0, source: "app"),
                                         Self.update("A10", at: Self.t0 + 1, progress: 0.3)]).status == 200)
        server.time.set(Self.t0 + 600)
        #expect(try server.post(events: [Self.observed("A10", at: Self.t0 + 600, progress: 0.99)]).status == 200)
        let activity = try server.json("/api/activities/A10")
        #expect(activity["content_state"] == Self.content(0.3))
        #expect(activity["delivery"] == ["last_confirmed_at": .null, "missed": 0])
        #expect(try server.metric(#"liveactivity_push_deliveries_total{outcome="missed"}"#) == 0)
        let observed = (activity["events"]?.arrayValue ?? []).first { $0["type"] == "activity.observed" }
        #expect(observed?["effect"]?["result"] == "applied")
        #expect(observed?["lock_screen"]?["content_changes"] == [])
    }

    @Test func theMissedPushLeavesTheCardToThePhonesWordAndANewerPushStillApplies() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.started("A11", "BK-11", at: Self.t0, source: "app"),
                                         Self.update("A11", at: Self.t0 + 10, progress: 0.5)]).status == 200)
        server.time.set(Self.t0 + 400)
        #expect(try server.post(events: [Self.observed("A11", at: Self.t0 + 400, progress: 0)]).status == 200)
        var activity = try server.json("/api/activities/A11")
        #expect(activity["content_state"] == Self.content(0))
        #expect(activity["content_timestamp"] == .string(RFC3339.format(Self.t0)))
        #expect(activity["delivery"]?["missed"] == 1)
        #expect(try server.post(events: [Self.update("A11", at: Self.t0 + 401, progress: 0.6)]).status == 200)
        activity = try server.json("/api/activities/A11")
        #expect(activity["content_state"] == Self.content(0.6))
        // Survives a restart (the evidence is in the activity's row).
        try server.restart()
        activity = try server.json("/api/activities/A11")
        #expect(activity["delivery"]?["missed"] == 1)
        server.time.set(Self.t0 + 410)
        #expect(try server.post(events: [Self.observed("A11", at: Self.t0 + 410, progress: 0.6)]).status == 200)
        #expect(try server.metric(#"liveactivity_push_deliveries_total{outcome="confirmed"}"#) == 1)
    }

    /// After a crash, start-up replays the events the tables had not caught up with: the
    /// delivery evidence (in the activity's row) and the push-to-start book end as they were,
    /// and nothing is counted twice.
    @Test func aCrashBetweenCatchUpsKeepsTheEvidenceAndTheBook() throws {
        let server = try TestServer { $0.catchUpInterval = 3600 }   // behind until told
        defer { server.stop() }
        #expect(try server.post(events: [Self.started("AC", "BK-C", at: Self.t0, source: "app")]).status == 200)
        server.time.set(Self.t0 + 10)
        #expect(try server.post(events: [Self.deviceToken("dev-c", Self.tokenA, at: Self.t0 + 1),
                                         Self.startPush("BK-D", at: Self.t0 + 2)]).status == 200)
        for i in 1...3 {
            #expect(try server.post(events: [Self.update("AC", at: Self.t0 + 10 + Double(i), progress: Double(i) / 10)]).status == 200)
        }
        server.time.set(Self.t0 + 200)
        // The last push is within the grace of the observation: it still awaits its verdict.
        #expect(try server.post(events: [Self.update("AC", at: Self.t0 + 195, progress: 0.4),
                                         Self.observed("AC", at: Self.t0 + 200, progress: 0.2)]).status == 200)
        #expect(!(try ReplayTests.rowsBehind(server, ids: ["AC"])).isEmpty, "the evidence was left for a later commit")

        let directory = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let image = directory + "/monitor.sqlite"
        let expected = try ReplayTests.crashImage(of: server, to: image, ids: ["AC"])
        #expect(expected.records.first?.delivery.missed == 1)
        #expect(expected.records.first?.delivery.known.contains { $0.push != nil } == true)
        let book = server.server.store.withState { ($0.pushToStartTokens, $0.startDeadline) }

        let (clock, _) = Clock.manual(server.time.value)
        let copy = try EventStore(path: image, clock: clock)
        let replayed = try ReplayTests.state(of: copy, ids: ["AC"])
        let copied = copy.withState { ($0.pushToStartTokens, $0.startDeadline) }
        copy.close()
        #expect(replayed.records == expected.records)
        #expect(replayed.counters == expected.counters)
        #expect(copied.0 == book.0 && copied.1 == book.1)
    }

    /// What the read API's replay says of each event is what the writer counted.
    @Test func theReplayAgreesWithTheCounters() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [Self.deviceToken("dev-9", Self.tokenA, at: Self.t0 - 500),
                                         Self.deviceToken("dev-9", Self.tokenB, at: Self.t0 - 400)]).status == 200)
        // Each sent at its time; the window of the first has passed when the activity starts,
        // the last is sent after it.
        for i in 0..<5 {
            server.time.set(Self.t0 + Double(i) * 200)
            #expect(try server.post(events: [Self.startPush("BK-R", at: Self.t0 + Double(i) * 200,
                                                            token: i == 3 ? Self.tokenA : Self.tokenB)]).status == 200)
        }
        server.time.set(Self.t0 + 950)
        #expect(try server.post(events: [Self.started("AR", "BK-R", at: Self.t0 + 950)]).status == 200)
        server.time.set(Self.t0 + 1000)
        #expect(try server.post(events: [Self.startPush("BK-R", at: Self.t0 + 1000, token: Self.tokenB)]).status == 200)
        server.time.set(Self.t0 + 5000)
        let effects = try Self.effects(server, booking: "BK-R")
        let (started, notStarted) = try Self.outcomes(server)
        #expect(Double(effects.count { $0["start"] == "started" }) == started)
        #expect(Double(effects.count { $0["start"] == "not_started" }) == notStarted)
        #expect(effects.count { $0["why"] == "superseded_token" } == 1)
        #expect(started == 3 && notStarted == 2)
    }
}
