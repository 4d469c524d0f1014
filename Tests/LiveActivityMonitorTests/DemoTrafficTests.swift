import Dispatch
import Foundation
import HTTPServer
import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// `serve --demo`: the scenario is deterministic, valid and bounded (no server needed), and the
/// running demo, posting to a real server over HTTP, shows every fault class in `/metrics`
/// within seconds.
@Suite struct DemoTrafficTests {
    static let start = 1_795_000_000.0

    static func scenario(seed: UInt64 = DemoTraffic.defaultSeed, runTag: UInt64 = 7, rate: Double = 20,
                         maxLive: Int = 200) -> DemoScenario {
        var s = DemoScenario.Settings()
        s.seed = seed
        s.runTag = runTag
        s.ratePerMinute = rate
        s.maxLive = maxLive
        return DemoScenario(settings: s, start: start)
    }

    static func texts(_ events: [JSONObject]) -> [String] { events.map { JSONValue.object($0).jsonString } }

    // MARK: the scenario alone

    @Test func sameSeedGivesTheSameTrafficHoweverTimeIsSliced() {
        var a = Self.scenario()
        var b = Self.scenario()
        var sliced: [JSONObject] = []
        var t = Self.start
        while t < Self.start + 300 {
            t += 0.25
            sliced += b.events(until: t)
        }
        let whole = a.events(until: Self.start + 300)
        #expect(whole.count > 500)
        #expect(Self.texts(whole) == Self.texts(sliced))
    }

    @Test func seedChangesTheTrafficAndRunTagOnlyTheIdentities() {
        var base = Self.scenario(runTag: 1)
        var otherRun = Self.scenario(runTag: 2)
        var otherSeed = Self.scenario(seed: 42, runTag: 1)
        let a = base.events(until: Self.start + 120)
        let b = otherRun.events(until: Self.start + 120)
        let c = otherSeed.events(until: Self.start + 120)
        #expect(Self.texts(a) != Self.texts(c))
        #expect(Self.texts(a) != Self.texts(b))
        for key in ["id", "activity_id", "push_token"] {
            let first = Set(a.compactMap { $0[key]?.stringValue })
            let second = Set(b.compactMap { $0[key]?.stringValue })
            #expect(!first.isEmpty && first.isDisjoint(with: second), "\(key)")
        }
        let identity: Set<String> = ["id", "activity_id", "booking_id", "push_token", "apns_id", "device_id", "channel_id",
                                     "apns_request_id"]
        func anonymous(_ events: [JSONObject]) -> [String] {
            Self.texts(events.map { JSONObject($0.entries.filter { !identity.contains($0.key) }.map { ($0.key, $0.value) }) })
        }
        #expect(anonymous(a) == anonymous(b))
    }

    @Test func everyEventIsValidWithRealisticIdentities() throws {
        var scenario = Self.scenario(rate: 60)
        let events = scenario.events(until: Self.start + 300)
        var invalid: [String] = []
        var ids: [String: Int] = [:]
        var types: Set<String> = []
        for (i, event) in events.enumerated() {
            if case .invalid(let errors) = EventValidator.validate(.object(event), index: i) {
                invalid.append("\(JSONValue.object(event).jsonString): \(errors.map { "\($0.field) \($0.error)" })")
            }
            ids[event["id"]?.stringValue ?? "", default: 0] += 1
            types.insert(event["type"]?.stringValue ?? "")
            if event["type"]?.stringValue == EventType.devicePushToStartToken.rawValue {
                // A device's token belongs to no booking: it names the device.
                let device = event["device_id"]?.stringValue ?? ""
                #expect(device.wholeMatch(of: /device-[0-9a-f]{16}/) != nil, "device \(device)")
            } else if event["activity_id"] == nil, event["booking_id"] == nil, event["type"] != "push.sent" || event["channel_id"] != nil {
                // A channel request or a broadcast names a channel, as APNs gives one (a refused create, none).
                if let channel = event["channel_id"]?.stringValue {
                    #expect(channel.wholeMatch(of: /[A-Za-z0-9+\/]{22}==/) != nil, "channel \(channel)")
                } else {
                    #expect(event["type"] == "channel.created" && event["status"] != 201)
                }
            } else {
                let booking = event["booking_id"]?.stringValue ?? ""
                #expect(booking.wholeMatch(of: /BK-\d{4,}/) != nil, "booking \(booking)")
            }
            if let token = event["push_token"]?.stringValue {
                #expect(token.wholeMatch(of: /[0-9a-f]{64}/) != nil, "token \(token)")
            }
        }
        #expect(invalid.isEmpty, "\(invalid.prefix(3))")
        #expect(types == Set(EventType.allCases.map(\.rawValue)))
        #expect(ids[""] == nil, "every event has an id")
        // Reports sent twice on purpose (the reporter's retry) are the only repeated ids.
        let repeated = ids.values.filter { $0 > 1 }
        #expect(!repeated.isEmpty && repeated.allSatisfy { $0 == 2 } && repeated.count < events.count / 50)
        #expect(events.contains { $0["type"] == "activity.started" && $0["attributes_type"] == "TimerWidgetAttributes" })
        #expect(events.contains { $0["type"] == "activity.started" && $0["attributes_type"] == "LiveActivityAttributes" })
    }

    @Test func eventsOfOneActivityAreInTimeOrder() {
        var scenario = Self.scenario(rate: 60)
        let events = scenario.events(until: Self.start + 300)
        var lastOccurred: [String: Double] = [:]
        var seen: Set<String> = []
        for event in events {
            guard seen.insert(event["id"]?.stringValue ?? "").inserted else { continue }   // a report sent twice
            guard let id = event["activity_id"]?.stringValue, let t = event["occurred_at"]?.doubleValue,
                  event["type"] != "activity.started" else { continue }   // a push-to-start report names its start time
            #expect(t >= (lastOccurred[id] ?? 0) - 1e-9, "\(id) goes back in time at \(t)")
            lastOccurred[id] = t
        }
        #expect(lastOccurred.count > 100)
    }

    @Test func liveActivitiesStayBoundedAtAnyRate() {
        var scenario = Self.scenario(rate: 3000, maxLive: 40)
        var t = Self.start
        var most = 0
        while t < Self.start + 900 {
            t += 1
            _ = scenario.events(until: t)
            most = max(most, scenario.live)
            #expect(scenario.pending < 40 * 200)
        }
        #expect(most == 40)
        #expect(scenario.skipped > 1000)
        #expect(scenario.started > 150)
    }

    @Test func defaultRateGivesALivelyButBoundedFleet() {
        var scenario = Self.scenario()
        let events = scenario.events(until: Self.start + 600)
        let starts = events.filter { $0["type"] == "activity.started" }
        // 20 per minute for 10 minutes, plus the backfill, the opening burst and the match's fans.
        let fans = DemoScenario.fansPerMatch
        #expect((190 + fans...260 + fans).contains(starts.count), "\(starts.count) starts")
        #expect((20...120).contains(scenario.live), "\(scenario.live) live")
        #expect(events.filter { $0["type"] == "push.sent" }.count > 1000)
    }

    @Test func loopbackAddressOfTheServersBaseURL() {
        #expect(DemoTraffic.loopbackAddress("http://127.0.0.1:9464") == ("127.0.0.1", 9464))
        #expect(DemoTraffic.loopbackAddress("http://0.0.0.0:8080") == ("127.0.0.1", 8080))
        #expect(DemoTraffic.loopbackAddress("http://[::]:81/") == ("127.0.0.1", 81))
        #expect(DemoTraffic.loopbackAddress("http://10.1.2.3:82") == ("10.1.2.3", 82))
        #expect(DemoTraffic.loopbackAddress("http://[::1]:83") == ("::1", 83))
        #expect(DemoTraffic.loopbackAddress("http://[2001:db8::7]:84") == ("2001:db8::7", 84))
    }

    // MARK: the demo against a real server

    /// One sample line of `/metrics`.
    struct Sample: Sendable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    static func samples(_ text: String) -> [Sample] {
        text.split(separator: "\n").compactMap { line -> Sample? in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "),
                  let value = Double(line[line.index(after: space)...]) else { return nil }
            let series = line[..<space]
            guard let brace = series.firstIndex(of: "{") else { return Sample(name: String(series), labels: [:], value: value) }
            var labels: [String: String] = [:]
            for pair in series[series.index(after: brace)..<series.index(before: series.endIndex)]
                .matches(of: /([a-zA-Z_]+)="([^"]*)"/) {
                labels[String(pair.output.1)] = String(pair.output.2)
            }
            return Sample(name: String(series[..<brace]), labels: labels, value: value)
        }
    }

    static func sum(_ samples: [Sample], _ name: String, _ labels: [String: String] = [:]) -> Double {
        samples.filter { s in s.name == name && labels.allSatisfy { s.labels[$0.key] == $0.value } }
            .reduce(0) { $0 + $1.value }
    }

    /// Every fault class and ending the issue names, as a `/metrics` condition.
    static let faultClasses: [(name: String, holds: @Sendable ([Sample]) -> Bool)] = [
        ("token rotations", { sum($0, "liveactivity_push_token_rotations_total") > 0 }),
        ("pushes to the superseded token",
         { sum($0, "liveactivity_pushes_without_effect_total", ["why": "superseded_token"]) > 0 }),
        ("410 Unregistered",
         { sum($0, "liveactivity_push_requests_total", ["status": "410", "reason": "Unregistered"]) > 0 }),
        ("400 BadDeviceToken",
         { sum($0, "liveactivity_push_requests_total", ["status": "400", "reason": "BadDeviceToken"]) > 0 }),
        ("429 TooManyRequests",
         { sum($0, "liveactivity_push_requests_total", ["status": "429", "reason": "TooManyRequests"]) > 0 }),
        ("5xx", { s in ["500", "503"].contains { sum(s, "liveactivity_push_requests_total", ["status": $0]) > 0 } }),
        ("late (out-of-order) updates",
         { sum($0, "liveactivity_pushes_without_effect_total", ["why": "out_of_order"]) > 0 }),
        ("stale transitions", { sum($0, "liveactivity_stale_transitions_total") > 0 }),
        ("stale activities now", { sum($0, "liveactivity_activities", ["state": "stale"]) > 0 }),
        ("ended by the system after 8 h", { sum($0, "liveactivity_activities_ended_total", ["by": "system"]) > 0 }),
        ("priority-10 heavy activities", { sum($0, "liveactivity_priority10_heavy_activities") > 0 }),
        ("ended by push", { sum($0, "liveactivity_activities_ended_total", ["by": "push"]) > 0 }),
        ("ended by the app", { sum($0, "liveactivity_activities_ended_total", ["by": "app"]) > 0 }),
        ("dismissals", { sum($0, "liveactivity_activities_dismissed_total") > 0 }),
        ("push-to-start", { sum($0, "liveactivity_activities_started_total", ["source": "push_to_start"]) > 0 }),
        // What only the phone reveals (issue 21).
        ("undecodable pushes", { sum($0, "liveactivity_pushes_without_effect_total", ["why": "undecodable_content"]) > 0 }),
        ("a timestamp in milliseconds", { sum($0, "liveactivity_push_warnings_total", ["warning": "timestamp_in_future"]) > 0 }),
        ("payloads over 4 KB", { sum($0, "liveactivity_push_warnings_total", ["warning": "payload_too_large"]) > 0 }),
        ("a reason APNs never gave", { sum($0, "liveactivity_push_warnings_total", ["warning": "unknown_reason"]) > 0 }),
        ("deliveries confirmed", { sum($0, "liveactivity_push_deliveries_total", ["outcome": "confirmed"]) > 0 }),
        ("deliveries missed", { sum($0, "liveactivity_push_deliveries_total", ["outcome": "missed"]) > 0 }),
        ("start pushes that started an activity", { sum($0, "liveactivity_push_to_start_total", ["outcome": "started"]) > 0 }),
        ("start pushes that started nothing", { sum($0, "liveactivity_push_to_start_total", ["outcome": "not_started"]) > 0 }),
        ("pushes after the end", { sum($0, "liveactivity_pushes_without_effect_total", ["why": "ended"]) > 0 }),
        ("pushes to an unknown activity",
         { sum($0, "liveactivity_pushes_without_effect_total", ["why": "unknown_activity"]) > 0 }),
        ("duplicate reports", { sum($0, "liveactivity_ingest_duplicates_total") > 0 }),
        // Broadcast channels (issue 22).
        ("broadcasts at priority 1", { sum($0, "liveactivity_broadcast_pushes_total", ["priority": "1"]) > 0 }),
        ("live channels", { sum($0, "liveactivity_channels") > 0 }),
        ("subscribed activities", { sum($0, "liveactivity_channel_subscriptions") > 0 }),
        ("a channel create APNs refused", { sum($0, "liveactivity_channel_requests_total", ["status": "400"]) > 0 }),
        ("a channel deleted", { sum($0, "liveactivity_channel_requests_total", ["op": "delete", "status": "204"]) > 0 }),
        ("a broadcast to a deleted channel",
         { sum($0, "liveactivity_pushes_without_effect_total", ["why": "unknown_channel"]) > 0 }),
        ("an expiration on a no-storage channel",
         { sum($0, "liveactivity_push_warnings_total", ["warning": "expiration_on_no_storage_channel"]) > 0 }),
        ("timers started", { sum($0, "liveactivity_activities_started_total", ["attributes_type": "TimerWidgetAttributes"]) > 0 }),
        ("rides started", { sum($0, "liveactivity_activities_started_total", ["attributes_type": "LiveActivityAttributes"]) > 0 }),
        ("active activities now", { sum($0, "liveactivity_activities", ["state": "active"]) > 0 }),
        ("ended activities still visible", { sum($0, "liveactivity_activities", ["state": "ended"]) > 0 }),
    ]

    @Test func demoShowsEveryFaultClassInMetricsWithinSeconds() throws {
        let token = "demo-test-ingest-token-0123456789"
        let server = try TestServer { c in
            c.clock = .system   // the demo's events happen now, so the server must look at the real time
            c.ingestToken = token
        }
        defer { server.stop() }
        var options = DemoTraffic.Options()
        options.runTag = 1
        options.tickSeconds = 0.1
        let began = Date()
        let demo = DemoTraffic.start(baseURL: server.server.baseURL, token: token, options: options)
        var samples: [Sample] = []
        // Bounded: the opening burst finishes by about 4.5 s; give a loaded machine twice that.
        while Date().timeIntervalSince(began) < 9 {
            samples = Self.samples(try server.get("/metrics").text)
            if Self.faultClasses.allSatisfy({ $0.holds(samples) }) { break }
            Thread.sleep(forTimeInterval: 0.25)
        }
        let seen = Date().timeIntervalSince(began)
        let stopping = Date()
        demo.stop()
        #expect(Date().timeIntervalSince(stopping) < 2, "stop() is prompt")
        samples = Self.samples(try server.get("/metrics").text)
        let missing = Self.faultClasses.filter { !$0.holds(samples) }.map(\.name)
        #expect(missing.isEmpty, "not in /metrics after \(seen) s: \(missing)")
        #expect(seen < 7, "every fault class took \(seen) s")
        #expect(Self.sum(samples, "liveactivity_ingest_rejected_total") == 0, "the demo posts only valid, authorised events")

        let stats = demo.statistics
        #expect(stats.failedRequests == 0, "\(stats.lastFailure ?? "")")
        #expect(stats.accepted > 100 && stats.duplicates > 0 && stats.accepted + stats.duplicates == stats.eventsPosted)
        #expect(Self.sum(samples, "liveactivity_ingest_events_total") == Double(stats.accepted))

        let list = try server.json("/api/activities?limit=1000")
        let activities = list["activities"]?.arrayValue ?? []
        let types = Set(activities.compactMap { $0["attributes_type"]?.stringValue })
        #expect(types == ["TimerWidgetAttributes", "LiveActivityAttributes", DemoScenario.matchType])
        let ride = try #require(activities.first { $0["attributes_type"] == "LiveActivityAttributes" && $0["state"] == "active" })
        #expect(ride["content_state"]?["driverName"]?.stringValue != nil)
        #expect(ride["content_state"]?["progress"]?.doubleValue != nil)
        let booking = try #require(ride["booking_id"]?.stringValue)
        #expect(try server.get("/api/bookings/\(booking)").status == 200)
        // The demo stopped: nothing more arrives.
        let after = try server.metric("liveactivity_ingest_events_total{type=\"push.sent\"}")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try server.metric("liveactivity_ingest_events_total{type=\"push.sent\"}") == after)
    }

    /// `serve --host ::1 --demo`: the demo posts to the address the server is bound to, over IPv6.
    @Test(.enabled(if: IPv6Loopback.isAvailable, Comment(rawValue: IPv6Loopback.skipReason)))
    func demoReachesAServerBoundToTheIPv6Loopback() throws {
        let server = try TestServer { c in
            c.clock = .system
            c.host = "::1"
        }
        defer { server.stop() }
        #expect(server.server.baseURL == "http://[::1]:\(server.server.port)")
        var options = DemoTraffic.Options()
        options.runTag = 2
        options.tickSeconds = 0.05
        let demo = DemoTraffic.start(baseURL: server.server.baseURL, token: nil, options: options)
        let began = Date()
        while demo.statistics.accepted == 0, demo.statistics.failedRequests == 0, Date().timeIntervalSince(began) < 5 {
            Thread.sleep(forTimeInterval: 0.05)
        }
        demo.stop()
        let stats = demo.statistics
        #expect(stats.failedRequests == 0, "\(stats.lastFailure ?? "")")
        #expect(stats.accepted > 0)
        // The test server's own client speaks 127.0.0.1, which a server bound to ::1 does not answer.
        let client = HTTPClient(host: "::1", port: server.server.port)
        defer { client.close() }
        let list = try JSONParser.parse(try client.request("GET", "/api/activities").body)
        let activities = list["activities"]?.arrayValue ?? []
        #expect(!activities.isEmpty)
    }

    @Test func demoGoesThroughIngestAuthentication() throws {
        let server = try TestServer { c in
            c.clock = .system
            c.ingestToken = "the-right-token-0123456789"
        }
        defer { server.stop() }
        var options = DemoTraffic.Options()
        options.tickSeconds = 0.05
        options.log = { _ in }
        let demo = DemoTraffic.start(baseURL: server.server.baseURL, token: "a-wrong-token-0123456789", options: options)
        let began = Date()
        while demo.statistics.failedRequests == 0, Date().timeIntervalSince(began) < 5 {
            Thread.sleep(forTimeInterval: 0.05)
        }
        demo.stop()
        demo.stop()   // idempotent
        let stats = demo.statistics
        #expect(stats.failedRequests > 0)
        #expect(stats.lastFailure?.hasPrefix("HTTP 401") == true, "\(stats.lastFailure ?? "no failure")")
        #expect(stats.accepted == 0)
        #expect(try server.metric("liveactivity_ingest_rejected_total{reason=\"unauthorized\"}") ?? 0 > 0)
        #expect(try server.metric("liveactivity_ingest_events_total{type=\"activity.started\"}") == 0)
    }
}
