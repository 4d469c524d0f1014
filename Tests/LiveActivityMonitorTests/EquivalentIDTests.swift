import Foundation
import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// Ids are compared by their bytes everywhere, as the tables compare them: two ids that Swift's
/// `String ==` calls equal because they are canonically equivalent ("ñ" as one scalar, and "n"
/// with a combining tilde) are two activities, two bookings, two channels. Before, memory keyed
/// them by `String` and merged them, while their rows stayed two: a dismissal of one spelling
/// dismissed the other in memory, and a replay of their booking showed one activity.
@Suite struct EquivalentIDTests {
    static let composed = "ni\u{F1}o"
    static let decomposed = "nin\u{303}o"

    static func bytes(_ s: String?) -> [UInt8]? { s.map { Array($0.utf8) } }

    /// Every byte outside ASCII letters and digits as `%XX` (Foundation's `.alphanumerics` keeps "ñ").
    static func percentEncoded(_ s: String) -> String {
        s.utf8.map { b in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) ? String(UnicodeScalar(b)) : "%" + String(format: "%02X", b)
        }.joined()
    }

    static func started(_ id: String, booking: String, channel: String? = nil, at: Double) -> JSONValue {
        guard case .object(var o) = IngestTests.started(id, at: at) else { return .null }
        o["booking_id"] = .string(booking)
        if let channel { o["channel_id"] = .string(channel) }
        return .object(o)
    }

    /// The ids the wall lists in `state`, as bytes, in order.
    static func listed(_ server: TestServer, _ state: String) throws -> [[UInt8]] {
        try ReadAPITests.pagedIDs(server, "state=\(state)&limit=1000").map { Array($0.utf8) }
    }

    @Test(arguments: [false, true]) func equivalentSpellingsAreTwoActivities(postgres: Bool) throws {
        #expect(Self.composed == Self.decomposed, "Swift calls them equal: the test's premise")
        #expect(Self.bytes(Self.composed) != Self.bytes(Self.decomposed))
        let uri = postgres ? try PostgresCluster.database() : nil
        let server = try TestServer { c in if let uri { c.databasePath = uri } }
        defer { server.stop() }
        let t = TestServer.base
        let active = "liveactivity_activities{attributes_type=\"TimerWidgetAttributes\",state=\"active\"}"
        // Both in one commit (the commit's slots), with equivalent bookings and channels.
        let answer = try server.post(events: [
            Self.started(Self.composed, booking: "BK-" + Self.composed, channel: "ch-" + Self.composed, at: t - 60),
            Self.started(Self.decomposed, booking: "BK-" + Self.decomposed, channel: "ch-" + Self.decomposed, at: t - 50),
        ])
        #expect(answer.text == #"{"accepted":2,"duplicates":0}"#)
        #expect(try server.metric(active) == 2)
        #expect(try Self.listed(server, "active") == [Self.decomposed, Self.composed].map { Array($0.utf8) })

        // A broadcast on one channel reaches its own subscriber only.
        let broadcast = BroadcastTests.broadcast(at: t - 40, content: 7, channel: "ch-" + Self.composed)
        #expect(try server.post(events: [broadcast]).status == 200)
        let walls = try server.json("/api/activities?limit=10")["activities"]?.arrayValue ?? []
        let contents = walls.map { (Self.bytes($0["activity_id"]?.stringValue), $0["content_state"]?["startedAt"]) }
        #expect(contents.count == 2)
        for (id, content) in contents {
            #expect(content == (id == Self.bytes(Self.composed) ? 7 : JSONValue.number(JSONNumber(t - 50))), "\(String(describing: id))")
        }

        // A dismissal of one spelling (a later commit: the table's index) leaves the other live.
        #expect(try server.post(events: [ReadAPITests.dismissed(Self.composed)]).status == 200)
        for pass in ["before a restart", "after it"] {
            #expect(try server.metric(active) == 1, "\(pass)")
            #expect(try Self.listed(server, "active") == [Array(Self.decomposed.utf8)], "\(pass)")
            #expect(try Self.listed(server, "dismissed") == [Array(Self.composed.utf8)], "\(pass)")
            // Each booking holds its own activity, now and as it was.
            for id in [Self.composed, Self.decomposed] {
                let path = "/api/bookings/" + Self.percentEncoded("BK-" + id)
                for query in ["", "?at=" + RFC3339.text(t - 45)] {
                    let activities = try server.json(path + query)["activities"]?.arrayValue ?? []
                    #expect(activities.map { Self.bytes($0["activity_id"]?.stringValue) } == [Self.bytes(id)], "\(path)\(query)")
                }
            }
            try server.restart()
        }
    }

    /// Two equivalent ids started and one dismissed within one request: one commit's slots.
    @Test func oneCommitKeepsEquivalentSpellingsApart() throws {
        let server = try TestServer()
        defer { server.stop() }
        let t = TestServer.base
        #expect(try server.post(events: [
            Self.started(Self.composed, booking: "BK-x", at: t - 60),
            Self.started(Self.decomposed, booking: "BK-y", at: t - 50),
            ReadAPITests.dismissed(Self.decomposed),
        ]).status == 200)
        #expect(try Self.listed(server, "active") == [Array(Self.composed.utf8)])
        #expect(try Self.listed(server, "dismissed") == [Array(Self.decomposed.utf8)])
    }

    /// A broadcast is judged per subscriber's attributes type: two types spelled equivalently
    /// are two content shapes, and one's verdict is not the other's.
    @Test func aBroadcastJudgesEquivalentTypesApart() throws {
        let server = try TestServer()
        defer { server.stop() }
        let t = TestServer.base
        func subscriber(_ id: String, type: String, content: [String: Any]) -> JSONValue {
            guard case .object(var o) = ContentShapeTests.start(id, type: type, content: content, at: t - 60) else { return .null }
            o["channel_id"] = "ch-types"
            return .object(o)
        }
        #expect(try server.post(events: [subscriber("a", type: "T" + Self.composed, content: ["step": 1]),
                                         subscriber("b", type: "T" + Self.decomposed, content: ["label": "x"])]).status == 200)
        let broadcast = BroadcastTests.broadcast(at: t - 30, content: 7, channel: "ch-types")
        guard case .object(var o) = broadcast else { return }
        o["content_state"] = ["step": 2]
        #expect(try server.post(events: [.object(o)]).status == 200)
        // The live records, and their timelines (the replay reads the verdicts stored per type).
        #expect(try server.json("/api/activities/a")["undecodable"] == .null)
        #expect(try server.json("/api/activities/a")["content_state"]?["step"] == 2)
        #expect(try server.json("/api/activities/b")["undecodable"]?["detail"]?.stringValue == "`label` missing")
        #expect(try server.json("/api/activities/b")["content_state"] == ["label": "x"])
        let why = { (id: String) in try BroadcastTests.effects(server.json("/api/activities/" + id)).last?.why }
        #expect(try why("a") == nil)
        #expect(try why("b") == "undecodable_content")
    }
}
