import Foundation
import JSON
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// A live record leaves its `attributes` and `content_state` texts to its row once the commit
/// that writes the row is done, and the pages read them back from the rows
/// (docs/ARCHITECTURE.md, "What one record costs"): the answers stay byte for byte what they
/// were, a later row write never nulls a text memory let go, and the engine's two reads of
/// them (a repeated start, an observation) see the stored texts.
@Suite(.serialized) struct TextsInRowTests {
    static let t0 = TestServer.base - 600

    /// Two rides of one booking (one on a channel) and a timer: texts with members in an order
    /// that is not sorted, so that a text made again from its value would show.
    static func starts() -> String {
        """
        [{"id":"s1","type":"activity.started","activity_id":"ride-1","booking_id":"BK-7","attributes_type":"ShuttleAttributes",\
        "occurred_at":\(t0),"app":"com.example.rides","attributes":{"z":"Zoë","a":[1,2.50,"é"]},\
        "content_state":{"progress":0.1,"driver":"Ana"},"push_token":"\(IngestTests.token)","relevance_score":50,"channel_id":"Y2hhbm5lbA"},
        {"id":"s2","type":"activity.started","activity_id":"ride-2","booking_id":"BK-7","attributes_type":"ShuttleAttributes",\
        "occurred_at":\(t0 + 10),"attributes":{"name":"second"},"content_state":{"progress":0,"driver":"Bo"},\
        "push_token":"\(IngestTests.token)"},
        {"id":"s3","type":"activity.started","activity_id":"timer-1","booking_id":"BK-8","attributes_type":"TimerWidgetAttributes",\
        "occurred_at":\(t0 + 20),"content_state":{"startedAt":\(t0 + 20)},"push_token":"\(IngestTests.token)"}]
        """
    }

    static func push(_ key: String, _ id: String, at t: Double, content: String) -> String {
        """
        {"id":"\(key)","type":"push.sent","activity_id":"\(id)","occurred_at":\(t),"event":"update","status":200,\
        "priority":10,"latency_ms":40,"push_token":"\(IngestTests.token)","timestamp":\(t),"content_state":\(content)}
        """
    }

    static func post(_ server: TestServer, _ body: String) throws {
        let response = try server.post(body)
        #expect(response.status == 200, "\(response.text)")
    }

    /// Every page that shows texts, as bytes.
    static let pages = ["/api/activities?limit=100", "/api/activities?limit=2", "/api/activities?q=ride",
                        "/api/activities?q=bk-7", "/api/bookings/BK-7", "/api/bookings/BK-8", "/api/activities/ride-1",
                        "/api/activities/timer-1", "/api/channels/Y2hhbm5lbA"]

    static func read(_ server: TestServer) throws -> [String: [UInt8]] {
        var answers: [String: [UInt8]] = [:]
        for page in pages {
            let response = try server.get(page)
            #expect(response.status == 200, "\(page)")
            answers[page] = response.body
        }
        return answers
    }

    static func textsInRow(_ server: TestServer) -> [String: RecordTexts] {
        server.server.store.withState { s in
            s.records.withRecords { Dictionary(uniqueKeysWithValues: $0.map { ($0.activityID, $0.textsInRow) }) }
        }
    }

    static func storedTexts(_ server: TestServer, _ id: String) throws -> [String?] {
        let db = try Database(path: server.configuration.databasePath, mode: .readOnly)
        return try db.query("SELECT attributes, content_state FROM activities WHERE activity_id = ?", [.text(id)])
            .first.map { $0.map(\.textValue) } ?? []
    }

    /// Over HTTP: the pages before the flush (some texts held), after it (every text let go)
    /// and after a restart (records read without their texts) are the same bytes.
    @Test func pagesAreTheSameBytesBeforeAndAfterTheFlushAndAfterARestart() throws {
        let server = try TestServer { $0.catchUpInterval = 3600 }
        defer { server.stop() }
        try Self.post(server, Self.starts())
        // New activities: their rows are written in their commit, and memory lets the texts go.
        #expect(Self.textsInRow(server).values.allSatisfy { $0 == .both })
        // Content changed by a commit that does not catch up: held again, the attributes not.
        let pushes = [Self.push("p1", "ride-1", at: Self.t0 + 60, content: #"{"progress":0.4,"driver":"Ana"}"#),
                      Self.push("p2", "ride-2", at: Self.t0 + 70, content: #"{"progress":0.2,"driver":"Bo"}"#)]
        try Self.post(server, "[" + pushes.joined(separator: ",") + "]")
        let held = Self.textsInRow(server)
        #expect(held == ["ride-1": .attributes, "ride-2": .attributes, "timer-1": .both])
        let before = try Self.read(server)
        #expect(String(decoding: before["/api/activities/ride-1"]!, as: UTF8.self)
            .contains(#""attributes":{"z":"Zoë","a":[1,2.50,"é"]}"#))
        #expect(String(decoding: before["/api/activities/ride-1"]!, as: UTF8.self)
            .contains(#""content_state":{"progress":0.4,"driver":"Ana"}"#))

        server.server.store.catchUp()
        #expect(Self.textsInRow(server).values.allSatisfy { $0 == .both }, "every live row written: no text in memory")
        #expect(server.server.store.withState { s in
            s.records.withRecords { $0.allSatisfy { $0.attributes == nil && $0.contentState == nil } }
        })
        let after = try Self.read(server)
        for page in Self.pages { #expect(after[page] == before[page], "\(page) after the flush") }

        try server.restart()
        #expect(Self.textsInRow(server).values.allSatisfy { $0 == .both }, "start-up reads no text")
        let restarted = try Self.read(server)
        for page in Self.pages { #expect(restarted[page] == before[page], "\(page) after a restart") }
    }

    /// A row rewritten after memory let its texts go keeps them: by an update (a token
    /// rotation), and by the write that sets its dismissal; the dismissed activity, read from
    /// its row, shows them.
    @Test func aLaterRowWriteNeverNullsATextMemoryLetGo() throws {
        let server = try TestServer()
        defer { server.stop() }
        try Self.post(server, Self.starts())
        let stored = try Self.storedTexts(server, "ride-1")
        #expect(stored == [#"{"z":"Zoë","a":[1,2.50,"é"]}"#, #"{"progress":0.1,"driver":"Ana"}"#])
        #expect(Self.textsInRow(server)["ride-1"] == .both)

        let rotation = """
            {"id":"r1","type":"activity.token_updated","activity_id":"ride-1","occurred_at":\(Self.t0 + 100),\
            "push_token":"\(String(repeating: "b2", count: 32))"}
            """
        try Self.post(server, rotation)
        server.server.store.catchUp()
        #expect(try server.json("/api/activities/ride-1")["token"]?["rotations"]?.int64Value == 1)
        #expect(try Self.storedTexts(server, "ride-1") == stored, "an update of the row leaves its texts")

        let dismissal = #"{"id":"d1","type":"activity.dismissed","activity_id":"ride-1","occurred_at":\#(Self.t0 + 200)}"#
        try Self.post(server, dismissal)
        #expect(server.server.store.withState { $0.records["ride-1"] } == nil)
        #expect(try Self.storedTexts(server, "ride-1") == stored, "the write of its dismissal leaves its texts")
        let page = String(decoding: try server.get("/api/activities/ride-1").body, as: UTF8.self)
        #expect(page.contains(#""state":"dismissed""#))
        #expect(page.contains(#""attributes":{"z":"Zoë","a":[1,2.50,"é"]},"content_state":{"progress":0.1,"driver":"Ana"}"#))
    }

    /// The engine's two reads of the texts, on records that let them go: a repeated start does
    /// not replace the attributes, and an observation of the content shown (equal as JSON,
    /// its members in another order) leaves the text as it came.
    @Test func theEngineReadsTheStoredTextsWhereItsRulesNeedThem() throws {
        let server = try TestServer()
        defer { server.stop() }
        try Self.post(server, Self.starts())
        #expect(Self.textsInRow(server)["ride-1"] == .both)
        let again = """
            {"id":"s1-again","type":"activity.started","activity_id":"ride-1","booking_id":"BK-7",\
            "attributes_type":"ShuttleAttributes","occurred_at":\(Self.t0 + 5),"attributes":{"other":true},\
            "content_state":{"progress":0.1,"driver":"Ana"},"push_token":"\(IngestTests.token)"}
            """
        let observed = """
            {"id":"o1","type":"activity.observed","activity_id":"ride-1","occurred_at":\(Self.t0 + 30),\
            "content_state":{"driver":"Ana","progress":0.10}}
            """
        try Self.post(server, "[" + again + "," + observed + "]")
        server.server.store.catchUp()
        let page = String(decoding: try server.get("/api/activities/ride-1").body, as: UTF8.self)
        #expect(page.contains(#""attributes":{"z":"Zoë","a":[1,2.50,"é"]},"content_state":{"progress":0.1,"driver":"Ana"}"#),
                "\(page)")
        #expect(try Self.storedTexts(server, "ride-1")
            == [#"{"z":"Zoë","a":[1,2.50,"é"]}"#, #"{"progress":0.1,"driver":"Ana"}"#])
    }
}
