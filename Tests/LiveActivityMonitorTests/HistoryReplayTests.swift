import Dispatch
import Foundation
import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// Server-side replay (DESIGN.md section 6, version 2): `?at=` answers the activities as the
/// server's engine had them at that instant, and every event of a read answer carries the
/// effect the engine gave it.
@Suite struct HistoryReplayTests {
    static let bookings = ["BK-1042", "BK-2001", "BK-1043"]

    static func iso(_ t: Double) -> String { RFC3339.format(t) }

    /// What a live answer said at one instant.
    struct Recorded {
        var at: Double
        var booking: String
        var answer: JSONValue
    }

    /// The scenario's events, each arriving at its own time on the server's clock, with the
    /// instants in between where only time changes something (the timer's stale date, the ride's
    /// dismissal date, the 8-hour end, the 12-hour limit).
    static var steps: [(at: Double, event: JSONValue?)] {
        let t0 = Scenario.t0
        let events: [(Double, JSONValue?)] = Scenario.events.map { ($0["occurred_at"]?.doubleValue ?? 0, $0) }
        let hour = 3600.0
        let offsets: [Double] = [1199, 1200, 1500, 1800, 1801, 2400, 3001, 2 * hour, 700 + 8 * hour, 701 + 8 * hour,
                                 760 + 12 * hour]
        let quiet: [(Double, JSONValue?)] = offsets.map { (t0 + $0, nil) }
        return (events + quiet).sorted { $0.0 < $1.0 }
    }

    @Test func theBookingViewAtAnInstantIsWhatTheLiveServerSaidThen() throws {
        let server = try TestServer(now: Scenario.t0 - 60)
        defer { server.stop() }
        var recorded: [Recorded] = []
        for (at, event) in Self.steps {
            server.time.set(at)
            if let event { #expect(try server.post(events: [event]).status == 200) }
            for booking in Self.bookings {
                let response = try server.get("/api/bookings/\(booking)")
                guard response.status == 200 else { continue }
                recorded.append(Recorded(at: at, booking: booking, answer: try JSONParser.parse(response.body)))
            }
        }
        #expect(recorded.count >= 3 * 12, "\(recorded.count) answers recorded")
        // Later: the server's clock is far past every instant asked about.
        server.time.set(Scenario.t0 + 3 * 86_400)
        var states = Set<String>()
        for live in recorded {
            let response = try server.get("/api/bookings/\(live.booking)?at=\(Self.iso(live.at))")
            #expect(response.status == 200, "\(response.text)")
            let past = try JSONParser.parse(response.body)
            let when = "\(live.booking) at +\(Int(live.at - Scenario.t0)) s"
            guard case .array(let liveActivities)? = live.answer["activities"],
                  case .array(let pastActivities)? = past["activities"] else {
                Issue.record("\(when): no activities")
                continue
            }
            #expect(pastActivities.count == liveActivities.count, "\(when): \(pastActivities.count) activities, live \(liveActivities.count)")
            for (a, b) in zip(liveActivities, pastActivities) {
                guard case .object(let fields) = a else { continue }
                for (key, value) in fields.entries {
                    #expect(b[key] == value, "\(when), \(a["activity_id"]?.stringValue ?? "?").\(key): replayed \(b[key]?.jsonString ?? "absent"), live \(value.jsonString)")
                }
                #expect(b.objectValue?.keys == fields.keys, "\(when): the same fields")
                states.insert(a["state"]?.stringValue ?? "")
            }
            // The events up to then, each with the effect the live server gave it then.
            #expect(past["events"] == live.answer["events"], "\(when): events")
            // What time alone had changed by then.
            let passed = live.answer["transitions"]?.arrayValue?.filter { (RFC3339.parse($0["at"]?.stringValue ?? "") ?? .infinity) <= live.at }
            #expect(past["transitions"]?.arrayValue == passed, "\(when): transitions")
        }
        #expect(states == ["active", "stale", "ended", "dismissed"], "the scenario went through every state: \(states)")
    }

    @Test func everyEventOfEveryAnswerCarriesItsEffect() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: Scenario.events).status == 200)
        let late = Self.iso(TestServer.base)
        let paths = Self.bookings.flatMap { ["/api/bookings/\($0)", "/api/bookings/\($0)?at=\(late)"] }
            + ["ride-1", "ride-2", "timer-1"].flatMap { ["/api/activities/\($0)", "/api/activities/\($0)?at=\(late)"] }
        var whys: [String: Int] = [:]
        for path in paths {
            let answer = try server.json(path)
            let events = answer["events"]?.arrayValue ?? []
            #expect(!events.isEmpty, "\(path)")
            for event in events {
                guard let effect = event["effect"]?.objectValue else {
                    Issue.record("\(path): an event without effect: \(event.jsonString)")
                    continue
                }
                #expect(effect.keys == ["result", "why", "detail", "warnings", "delivery", "delivery_seconds", "start", "text"],
                        "\(path)")
                #expect(effect["detail"] == .null, "\(path): only an undecodable push has one")
                #expect(effect["warnings"] == .array([]))
                let why = effect["why"]?.stringValue
                #expect((effect["result"] == "applied") == (why == nil), "\(path): \(effect)")
                if path.hasPrefix("/api/bookings/"), !path.contains("?"), event["type"] == "push.sent", let why {
                    whys[why, default: 0] += 1
                }
            }
        }
        #expect(whys == ["out_of_order": 1, "superseded_token": 1, "ended": 1, "failed": 3], "\(whys)")
        // The counters were moved from the same effects when the events were stored (the push to
        // "ghost" names no booking: it is the unknown activity).
        for (why, count) in whys.merging(["unknown_activity": 1], uniquingKeysWith: +) where why != "failed" {
            #expect(try server.metric("liveactivity_pushes_without_effect_total{why=\"\(why)\"}") == Double(count), "\(why)")
        }
        // The out-of-order push says what it met.
        let ride = try server.json("/api/bookings/BK-1042")["events"]?.arrayValue ?? []
        let p3 = ride.first { $0["id"] == "p3" }
        #expect(p3?["lock_screen"]?["before"]?["content_timestamp"] == .string(Self.iso(Scenario.t0 + 120)))
        #expect(p3?["lock_screen"]?["content_changes"] == .array([]))
        let p2 = ride.first { $0["id"] == "p2" }
        #expect(p2?["lock_screen"]?["content_changes"]?.arrayValue?.map { $0["key"]?.stringValue } == ["duration", "progress"])
    }

    @Test func anInvalidInstantIsABadRequest() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: Scenario.events).status == 200)
        for at in ["nope", "", "1795000000", "2026-13-01T00:00:00Z", "2026-11-18T11:06:40", "2026-11-18%2011:06:40Z"] {
            for path in ["/api/bookings/BK-1042", "/api/activities/ride-1"] {
                let response = try server.get("\(path)?at=\(at)")
                #expect(response.status == 400, "\(path)?at=\(at): \(response.status)")
                #expect(try JSONParser.parse(response.body)["error"]?.stringValue?.contains("RFC 3339") == true, "\(response.text)")
            }
        }
        // An offset's "+" unescaped in a query string arrives as a space: still understood.
        let plus = try server.json("/api/activities/ride-1?at=2026-11-18T11:06:40+01:00")
        let escaped = try server.json("/api/activities/ride-1?at=2026-11-18T11:06:40%2B01:00")
        #expect(plus["state"] != nil && plus == escaped)
        #expect(try server.get("/api/bookings/BK-NOPE?at=2026-11-18T11:06:40Z").status == 404)
        let before = try server.get("/api/activities/ride-1?at=\(Self.iso(Scenario.t0 - 1))")
        #expect(before.status == 404 && before.text.contains("had not started"), "\(before.text)")
        // Before its first event a booking has no activities and no events.
        let empty = try server.json("/api/bookings/BK-1042?at=\(Self.iso(Scenario.t0 - 1))")
        #expect(empty["activities"] == .array([]) && empty["events"] == .array([]))
        // An instant that RFC 3339 can be given in but not written back in (an offset moves it out
        // of years 0000–9999) is echoed as its number of seconds, as every such date is.
        let early = try server.json("/api/bookings/BK-1042?at=0000-01-01T00:00:00%2B23:59")
        #expect(early["at"] == .number(JSONNumber(-62_167_305_540.0)), "\(early["at"] ?? .null)")
        let late = try server.get("/api/activities/ride-1?at=0000-01-01T00:00:00%2B23:59")
        #expect(late.status == 404 && late.text.contains("had not started at -62167305540"), "\(late.text)")
    }

    /// An event that names another booking than its activity's (a backend that sent the id of a
    /// booking made again, or a wrong one) is that booking's too. Its answers list the activity,
    /// with the booking it has, and the event with what it did: not a null effect beside no
    /// activity, as when the activity's other events were left out of the replay.
    @Test func anEventNamingAnotherBookingSaysWhatItDidThere() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try TestServer(directory: dir)
        let t = Scenario.t0
        #expect(try server.post(events: [
            JSONValue(["id": "s1", "type": "activity.started", "activity_id": "R1", "booking_id": "BK-A",
                       "attributes_type": "LiveActivityAttributes", "occurred_at": t,
                       "content_state": Scenario.ride(0.1, 9), "push_token": Scenario.tokenA] as [String: Any]),
            Scenario.push("R1", "p1", at: t + 60, content: Scenario.ride(0.5, 4), extra: ["booking_id": "BK-B"]),
            Scenario.push("R1", "p2", at: t + 120, content: Scenario.ride(0.7, 2)),
        ]).status == 200)
        for at in ["", "?at=\(Self.iso(t + 90))"] {
            let b = try server.json("/api/bookings/BK-B" + at)
            #expect(b["activities"]?.arrayValue?.map { $0["activity_id"] } == ["R1"], "\(at)")
            #expect(b["activities"]?[0]?["booking_id"] == "BK-A", "\(at)")
            #expect(b["events"]?.arrayValue?.map { $0["id"] } == ["p1"], "\(at)")
            #expect(b["events"]?[0]?["effect"]?["result"] == "applied", "\(at)")
            #expect(b["events"]?[0]?["lock_screen"]?["content_changes"]?.arrayValue?.isEmpty == false, "\(at)")
            #expect(b["not_replayed"] == .array([]), "\(at)")
        }
        // As it was at p1's time: the activity showed p1's content, not p2's yet.
        let past = try server.json("/api/bookings/BK-B?at=\(Self.iso(t + 90))")
        #expect(past["activities"]?[0]?["content_state"]?["progress"] == 0.5)
        // Its own booking still has every event of it.
        #expect(try server.json("/api/bookings/BK-A")["events"]?.arrayValue?.map { $0["id"] } == ["s1", "p1", "p2"])
        let file = try server.get("/api/bookings/BK-B?format=ndjson").text
        #expect(try JSONParser.parse(String(file.split(separator: "\n")[0]))["effect"]?["result"] == "applied", "\(file)")
        server.stop(keepFiles: true)
        let text = try CommandLineTests.run(["history", "BK-B", "--db", dir + "/monitor.sqlite"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("R1  LiveActivityAttributes") && text.stdout.contains("(booking BK-A)"), "\(text.stdout)")
        #expect(!text.stdout.contains("not replayed"), "\(text.stdout)")
    }

    @Test func anActivityWhoseStartWasPrunedIsNotReplayed() throws {
        let server = try TestServer()
        defer { server.stop() }
        let base = TestServer.base, token = Scenario.tokenA
        #expect(try server.post(events: [
            JSONValue(["type": "activity.started", "activity_id": "old-ride", "booking_id": "BK-OLD",
                       "attributes_type": "LiveActivityAttributes", "occurred_at": base - 3 * 3600,
                       "content_state": Scenario.ride(0.1, 9), "push_token": token] as [String: Any]),
            Scenario.push("old-ride", "late-1", at: base - 600, content: Scenario.ride(0.5, 4)),
            JSONValue(["type": "activity.started", "activity_id": "new-ride", "booking_id": "BK-OLD",
                       "attributes_type": "LiveActivityAttributes", "occurred_at": base - 300,
                       "content_state": Scenario.ride(0.2, 8), "push_token": token] as [String: Any]),
        ]).status == 200)
        let retention = Retention(path: server.configuration.databasePath, age: 2 * 3600, interval: 3600,
                                  clock: server.configuration.clock, catchUp: { [store = server.server.store] in store.catchUp() }) { _ in }
        #expect(try retention.runOnce().events == 1)
        let booking = try server.json("/api/bookings/BK-OLD")
        #expect(booking["not_replayed"] == ["old-ride"])
        let events = booking["events"]?.arrayValue ?? []
        #expect(events.map { $0["effect"] == .null } == [true, false], "the push to old-ride is not judged without its start")
        #expect(booking["activities"]?.arrayValue?.count == 2, "the server still knows both")
        let at = try server.json("/api/bookings/BK-OLD?at=\(Self.iso(base - 60))")
        #expect(at["activities"]?.arrayValue?.map { $0["activity_id"] } == ["new-ride"])
        #expect(at["not_replayed"] == ["old-ride"])
        let activity = try server.get("/api/activities/old-ride?at=\(Self.iso(base - 60))")
        #expect(activity.status == 404 && activity.text.contains("pruned"), "\(activity.text)")
    }

    /// A booking of 500 events asked about one instant: printed, not asserted (a debug build on a
    /// shared machine says little; the README gives the release figure).
    @Test func aBookingOf500EventsAnswersAnInstant() throws {
        let server = try TestServer()
        defer { server.stop() }
        let t0 = TestServer.base - 7 * 3600
        var events: [JSONValue] = [JSONValue(["type": "activity.started", "activity_id": "busy", "booking_id": "BK-500",
                                              "attributes_type": "LiveActivityAttributes", "occurred_at": t0,
                                              "content_state": Scenario.ride(0, 60), "push_token": Scenario.tokenA] as [String: Any])]
        for i in 1..<500 {
            events.append(Scenario.push("busy", "busy-\(i)", at: t0 + Double(i) * 50, priority: i % 3 == 0 ? 5 : 10,
                                        content: Scenario.ride(Double(i) / 500, 60 - i / 10)))
        }
        #expect(try server.post(events: events).status == 200)
        let path = "/api/bookings/BK-500?at=\(Self.iso(t0 + 250 * 50 + 1))"
        let answer = try server.json(path)
        #expect(answer["events"]?.arrayValue?.count == 251)
        var best = Double.infinity
        for _ in 0..<5 {
            let start = DispatchTime.now().uptimeNanoseconds
            #expect(try server.get(path).status == 200)
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        print("a booking of 500 events at an instant: \(String(format: "%.1f", best)) ms (best of 5, this build)")
    }
}

extension HistoryReplayTests {
    /// Times are written to the millisecond: an event asked about at its `occurred_at` as the
    /// API wrote it is included, with what it did, whichever way its time was rounded.
    @Test func anEventAskedAboutAtItsWrittenTimeIsIncluded() throws {
        let server = try TestServer()
        defer { server.stop() }
        let start = TestServer.base - 100.0004, dismissed = TestServer.base - 10.1236  // written rounded up, then down
        #expect(try server.post(events: [
            JSONValue(["type": "activity.started", "activity_id": "ms-1", "booking_id": "BK-MS",
                       "attributes_type": "TimerWidgetAttributes", "occurred_at": start,
                       "content_state": ["startedAt": 0]] as [String: Any]),
            JSONValue(["type": "activity.dismissed", "activity_id": "ms-1", "occurred_at": dismissed] as [String: Any]),
        ]).status == 200)
        let events = try server.json("/api/bookings/BK-MS")["events"]?.arrayValue ?? []
        let written = events.compactMap { $0["occurred_at"]?.stringValue }
        #expect(written.count == 2)
        let atStart = try server.json("/api/activities/ms-1?at=\(written[0])")
        #expect(atStart["state"] == "active" && atStart["events"]?.arrayValue?.count == 1, "\(atStart.jsonString.prefix(200))")
        let atDismissal = try server.json("/api/bookings/BK-MS?at=\(written[1])")
        #expect(atDismissal["activities"]?[0]?["state"] == "dismissed", "\(atDismissal.jsonString.prefix(300))")
        #expect(atDismissal["events"]?.arrayValue?.count == 2)
        // A millisecond before the dismissal as written, it is not yet.
        let before = try server.json("/api/bookings/BK-MS?at=\(RFC3339.format((dismissed * 1000).rounded() / 1000 - 0.001))")
        #expect(before["activities"]?[0]?["state"] == "active")
    }

    /// An app's end reported after the 8-hour end the server inferred, but dated before it, is
    /// the activity's end: the card left the lock screen then (immediate dismissal), as a replay
    /// of the events says. Before, the inferred end stayed (the card counted as ended for 4 more
    /// hours), the event read `applied`, and the answer and `?at=` said two different things.
    @Test(arguments: [false, true]) func anEndReportedAfterTheInferredEndReplacesIt(dismissedMeanwhile: Bool) throws {
        let server = try TestServer()
        defer { server.stop() }
        let base = TestServer.base
        #expect(try server.post(events: [
            JSONValue(["type": "activity.started", "activity_id": "late-end", "booking_id": "BK-LE",
                       "attributes_type": "TimerWidgetAttributes", "occurred_at": base + 4 - 8 * 3600,
                       "content_state": ["startedAt": 0]] as [String: Any]),
        ]).status == 200)
        // The 8-hour end passes (and, in the second case, its 4 hours on the lock screen too).
        server.time.advance(by: dismissedMeanwhile ? 5 * 3600 : 7)
        let inferred = try server.json("/api/activities/late-end")
        #expect(inferred["ended_by"] == "system", "\(inferred.jsonString.prefix(300))")
        #expect(try server.post(events: [
            JSONValue(["id": "late-end-app", "type": "activity.ended", "activity_id": "late-end", "occurred_at": base + 2,
                       "dismissal_policy": "immediate"] as [String: Any]),
        ]).status == 200)
        let live = try server.json("/api/bookings/BK-LE")
        let activity = live["activities"]?[0]
        #expect(activity?["state"] == "dismissed" && activity?["ended_by"] == "app", "\(live.jsonString.prefix(600))")
        #expect(activity?["ended_at"] == .string(RFC3339.format(base + 2)) && activity?["dismissed_at"] == .string(RFC3339.format(base + 2)))
        #expect(live["events"]?.arrayValue?.last?["effect"]?["result"] == "applied")
        #expect(try server.metric("liveactivity_activities{attributes_type=\"TimerWidgetAttributes\",state=\"ended\"}") == 0)
        // What the replay says of that instant is what the live answer says.
        let replayed = try server.json("/api/bookings/BK-LE?at=\(RFC3339.format(server.time.value))")
        for key in ["state", "ended_by", "ended_at", "dismissed_at", "visible_until"] {
            #expect(replayed["activities"]?[0]?[key] == activity?[key], "\(key)")
        }
        // An end later still (the user's dismissal, reported afterwards) changes nothing.
        #expect(try server.post(events: [
            JSONValue(["id": "later", "type": "activity.ended", "activity_id": "late-end", "occurred_at": base + 3] as [String: Any]),
        ]).status == 200)
        #expect(try server.json("/api/bookings/BK-LE")["events"]?.arrayValue?.last?["effect"]?["result"] == "no_effect")
        try server.restart()
        #expect(try server.json("/api/activities/late-end")["ended_by"] == "app")
    }
}
