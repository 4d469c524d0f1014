import Foundation
import JSON
import Testing
@testable import LiveActivityMonitor

/// The one-object `push.sent` fast path (PushEventScanner): it takes the usual bodies, and
/// whatever it takes decodes to exactly the event the parser and validator make; whatever it
/// declines still gets the decoder's own answer.
@Suite struct PushEventScannerTests {
    static let decoder = IngestDecoder()
    static let tree: IngestDecoder = {
        var d = IngestDecoder()
        d.fastPath = false
        return d
    }()

    static let token = String(repeating: "0123456789abcdef", count: 4)

    /// A body as Tests/bench/single-event.lua sends it.
    static func benchBody(_ counter: Int) -> String {
        let t = String(format: "%.4f", 1_800_000_000 + Double(counter) * 0.0001)
        return #"{"id":"w-1-\#(counter)","type":"push.sent","activity_id":"a\#(counter % 1000)","occurred_at":\#(t),"#
            + #""event":"update","priority":\#(counter % 4 == 0 ? 5 : 10),"status":200,"latency_ms":\#(20 + counter % 60).0,"#
            + #""push_token":"\#(String(format: "%064x", counter))","timestamp":\#(t),"payload_bytes":212,"#
            + #""apns_id":"0e8b5a3c-6f0d-4d7e-9a51-\#(String(format: "%012d", counter))","#
            + #""content_state":{"driverName":"Ana","rating":"4.9","progress":\#(String(format: "%.2f", Double(counter % 100) / 100)),"duration":\#(counter % 30)}}"#
    }

    /// What both ways make of `body`. Whenever the fast path takes it, the general way must make
    /// the very same single event; `decode` (fast path on) must answer as the general way does.
    @discardableResult
    static func compare(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> (fast: Event?, tree: Result<[Event], APIError>) {
        let fast = decoder.fastPushEvent(body)
        let general = Result { () throws(APIError) -> [Event] in try tree.decode(body, format: .json) }
        let decoded = Result { () throws(APIError) -> [Event] in try decoder.decode(body, format: .json) }
        let text = String(decoding: body, as: UTF8.self)
        if let fast {
            guard case .success(let events) = general, events.count == 1 else {
                Issue.record("the fast path took what the decoder answers \(general) with: \(text)", sourceLocation: sourceLocation)
                return (fast, general)
            }
            #expect(fast.differences(from: events[0]) == [], "\(text)", sourceLocation: sourceLocation)
        }
        switch (decoded, general) {
        case (.success(let a), .success(let b)):
            #expect(a.count == b.count && zip(a, b).allSatisfy { $0.differences(from: $1).isEmpty }, "\(text)",
                    sourceLocation: sourceLocation)
        case (.failure(let a), .failure(let b)):
            #expect(a == b, "\(text)", sourceLocation: sourceLocation)
        default:
            Issue.record("decode answered \(decoded), the general way \(general): \(text)", sourceLocation: sourceLocation)
        }
        return (fast, general)
    }

    @discardableResult
    static func compare(_ body: String, sourceLocation: SourceLocation = #_sourceLocation) -> (fast: Event?, tree: Result<[Event], APIError>) {
        compare(Array(body.utf8), sourceLocation: sourceLocation)
    }

    // MARK: What it takes

    @Test func theBenchmarkBodiesTakeTheFastPath() throws {
        for counter in [1, 4, 17, 99, 100, 12_345, 999_999] {
            let (fast, tree) = Self.compare(Self.benchBody(counter))
            #expect(fast != nil, "\(Self.benchBody(counter))")
            #expect((try? tree.get())?.count == 1)
        }
        // The brief's example, field for field.
        let body = #"{"id":"w-1-17","type":"push.sent","activity_id":"a42","occurred_at":1800000000.0017,"event":"update","priority":10,"status":200,"latency_ms":37.0,"push_token":"\#(Self.token)","timestamp":1800000000.0017,"payload_bytes":212,"apns_id":"0e8b5a3c-6f0d-4d7e-9a51-000000000017","content_state":{"driverName":"Ana","rating":"4.9","progress":0.17,"duration":17}}"#
        let event = try #require(Self.compare(body).fast)
        #expect(event.key == "w-1-17" && event.activityID == "a42" && event.type == .pushSent)
        #expect(event.occurredAt == 1_800_000_000.0017 && event.timestamp == event.occurredAt)
        #expect(event.push == PushResult(kind: .update, status: 200, reason: nil, latencyMs: 37, priority: 10, payloadBytes: 212))
        #expect(event.contentState?.text == #"{"driverName":"Ana","rating":"4.9","progress":0.17,"duration":17}"#)
        #expect(event.tokenFingerprint == TokenFingerprint.of(Self.token))
        #expect(event.body == #"{"id":"w-1-17","type":"push.sent","activity_id":"a42","occurred_at":"2027-01-15T08:00:00.002Z","event":"update","priority":10,"status":200,"latency_ms":37.0,"token_fingerprint":"\#(TokenFingerprint.of(Self.token))","timestamp":"2027-01-15T08:00:00.002Z","payload_bytes":212,"apns_id":"0e8b5a3c-6f0d-4d7e-9a51-000000000017","content_state":{"driverName":"Ana","rating":"4.9","progress":0.17,"duration":17}}"#)
    }

    /// An array of one push event (what our reporter sends for one) is the same event; any
    /// other array goes the general way, and the array's level counts against the depth limit.
    @Test func anArrayOfOnePushTakesTheFastPath() throws {
        let body = Self.benchBody(17)
        for taken in ["[\(body)]", " [ \n\(body)\t] \r\n"] {
            #expect(Self.compare(taken).fast != nil, "\(taken)")
        }
        for declined in ["[\(body),]", "[\(body),\(body)]", "[[\(body)]]", "[\(body)", "\(body)]", "[]", "[ ]", "[\(body)]]",
                         "[\(body)][\(body)]", "[{}]", "[\(body)] x"] {
            #expect(Self.compare(declined).fast == nil, "\(declined)")
        }
        var d = IngestDecoder()
        d.limits.maxDepth = 2   // the event object and its content_state
        #expect(d.fastPushEvent(Array(body.utf8)) != nil)
        #expect(d.fastPushEvent(Array("[\(body)]".utf8)) == nil)
        #expect(throws: APIError.self) { try d.decode(Array("[\(body)]".utf8), format: .json) }
        d.limits.maxDepth = 3
        #expect(d.fastPushEvent(Array("[\(body)]".utf8)) != nil)
    }

    /// The fuzz corpus's single push bodies (the fuzzer starts from them) go the fast way.
    /// (`push-strange-values.json`: a timestamp in milliseconds, dates RFC 3339 cannot write,
    /// an unknown answer, a payload too large: stored as sent, the same body both ways.)
    @Test(arguments: ["push-single.json", "push-reporter-form.json", "push-start-blanks.json", "push-strange-values.json"])
    func theCorpusPushesTakeTheFastPath(_ name: String) throws {
        let data = try #require(FileManager.default.contents(atPath: FuzzRegressionTests.corpus + "/" + name))
        let (fast, _) = Self.compare([UInt8](data))
        #expect(fast != nil)
        if name == "push-strange-values.json", let fast {
            #expect(fast.body.contains(#""timestamp":1800000000500"#), "\(fast.body)")
            #expect(fast.body.contains(#""stale_date":"1969-12-31T00:00:00Z""#), "\(fast.body)")
            #expect(fast.body.contains(#""dismissal_date":253402387139"#), "\(fast.body)")
        }
    }

    /// The scanner's rules are the schema's `push.sent` rows, compiled: every row the schema
    /// allows on a push is one the scanner reads, and no other; it declines only a second token
    /// (`push_to_start_token`: the event keeps one fingerprint, so the general path reads it)
    /// and a broadcast's channel (`channel_id`: another kind of push, with other requirements).
    @Test func theRulesAreTheSchemasPushRows() {
        let rules = PushEventScanner.rules
        let read = EventField.allCases.filter { rules.byField[Int($0.rawValue)].kind != .notAllowed }
        #expect(Set(read.map(\.spec.label)) == EventSchema.names(allowedOn: .pushSent))
        let declined = EventField.allCases.filter { rules.byField[Int($0.rawValue)].kind == .unsupported }
        #expect(declined == [.pushToStartToken, .channelID])
        #expect(rules.byField.map { "\($0.name)" } == EventSchema.fields.map(\.label))
    }

    /// What the demo's ride backend reports (written by JSONWriter, one object per body).
    @Test func theDemoPushesTakeTheFastPath() {
        var s = DemoScenario.Settings()
        s.ratePerMinute = 60
        var scenario = DemoScenario(settings: s, start: 1_795_000_000)
        // Broadcasts (`channel_id`: the match) take the general path by design.
        let pushes = scenario.events(until: 1_795_000_000 + 900).filter { $0["type"] == "push.sent" && $0["channel_id"] == nil }
        #expect(pushes.count > 100)
        var taken = 0
        for push in pushes where Self.compare(JSONValue.object(push).jsonBytes).fast != nil { taken += 1 }
        // The demo's refused pushes (a field error on purpose) are the only ones declined.
        let valid = pushes.filter { if case .valid = EventValidator.validate(.object($0), index: 0) { true } else { false } }
        #expect(taken == valid.count, "\(taken) of \(valid.count) valid demo pushes took the fast path")
    }

    /// Bodies that are valid but unusual: each gives the same event whichever way it goes;
    /// `taken` says which way it must go.
    @Test(arguments: [
        // Blanks everywhere the grammar allows them, fields in another order.
        (" \r\n\t{ \"type\" : \"push.sent\" ,\n \"event\":\"end\", \"status\" : 0, \"latency_ms\":10000, \"push_token\":\"\(token)\", \"activity_id\":\"a\", \"occurred_at\":1800000000 ,\"content_state\": { \"a\" : [ 1 , { \"b\" : null } , [ ] , { } ] , \"c\":\"x y\" } } \n", true),
        // Optional fields null: kept as null in the stored body, booking_id left out.
        (#"{"type":"push.sent","id":null,"event":"update","status":200,"latency_ms":1,"push_token":"\#(token)","activity_id":"a","booking_id":null,"attributes_type":null,"app":null,"occurred_at":1800000000,"reason":null,"apns_id":null,"apns_unique_id":null,"payload_bytes":null,"priority":null,"timestamp":null,"content_state":null,"stale_date":null,"dismissal_date":null,"relevance_score":null,"alert":null,"attributes":null}"#, true),
        // Every field set; dates as RFC 3339 with offsets and fractions; failure with a reason.
        (#"{"id":"e1","type":"push.sent","activity_id":"a","booking_id":"BK-1","attributes_type":"RideAttributes","occurred_at":"2027-01-15T09:00:00.250+01:00","app":"com.example.ride","event":"update","status":410,"latency_ms":12.5,"push_token":"\#(token.uppercased())","priority":5,"reason":"Unregistered","apns_id":"x","apns_unique_id":"y","payload_bytes":0,"timestamp":"2027-01-15T08:00:00Z","content_state":{"k":1},"stale_date":"2027-01-15t08:30:00.1234z","dismissal_date":"2027-01-15T07:00:00-01:00","relevance_score":-1e9,"alert":{"title":"Ana is close","body":""},"attributes":{"name":"Ride"}}"#, true),
        // Push-to-start: no activity_id, a booking_id.
        (#"{"type":"push.sent","event":"start","booking_id":"BK-9","attributes_type":"RideAttributes","status":200,"latency_ms":0,"push_token":"\#(token)","occurred_at":1.8e9,"attributes":{"name":"x"},"content_state":{}}"#, true),
        (#"{"type":"push.sent","event":"start","activity_id":null,"booking_id":"BK-9","status":200,"latency_ms":-0,"push_token":"\#(token)","occurred_at":18e8}"#, true),
        // Numbers kept as their literals: 1e3, -0, 1.50, big integers, exponents.
        (#"{"type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1.50,"push_token":"\#(token)","occurred_at":1800000000.000,"relevance_score":-0,"content_state":{"a":1e3,"b":-0,"c":1.50,"d":123456789012345678901234567890,"e":1E+2,"f":-0.0e-0,"g":0.1e-99,"h":true,"i":false}}"#, true),
        // Unicode kept as it is (the writer escapes none of it but U+2028 and U+2029).
        (#"{"type":"push.sent","event":"update","activity_id":"açaí-🚕","id":"é","app":"日本","reason":"Ünregistered","status":200,"latency_ms":1,"push_token":"\#(token)","occurred_at":1800000000,"content_state":{"driverName":"Zoë 🚕","ключ":"значение"},"alert":{"title":"Ana — 2 min","body":"🚕"}}"#, true),
        // An alert with blanks; title only; body only.
        (#"{"type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"\#(token)","occurred_at":1800000000,"alert":{ "body" : "b" , "title":"t" }}"#, true),
        (#"{"type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"\#(token)","occurred_at":1800000000,"alert":{"title":"t"}}"#, true),
        // Declined but valid: escapes, characters the writer escapes, integers written as decimals,
        // a long exponent.
        (#"{"type":"push.sent","event":"update","activity_id":"a\/b","status":200,"latency_ms":1,"push_token":"\#(token)","occurred_at":1800000000}"#, false),
        (#"{"type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"\#(token)","occurred_at":1800000000,"content_state":{"t":"\u00e9\n\"q\""}}"#, false),
        (#"{"type":"push.sent","event":"update","activity_id":"a<b>&c","status":200,"latency_ms":1,"push_token":"\#(token)","occurred_at":1800000000}"#, false),
        ("{\"type\":\"push.sent\",\"event\":\"update\",\"activity_id\":\"a\u{2028}\",\"status\":200,\"latency_ms\":1,\"push_token\":\"\(token)\",\"occurred_at\":1800000000}", false),
        (#"{"type":"push.sent","event":"update","activity_id":"a","status":200.0,"latency_ms":1,"push_token":"\#(token)","occurred_at":1800000000}"#, false),
        (#"{"type":"push.sent","event":"update","activity_id":"a","status":2e2,"priority":1e1,"latency_ms":1,"push_token":"\#(token)","occurred_at":1800000000}"#, false),
        (#"{"type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1e000,"push_token":"\#(token)","occurred_at":1800000000}"#, false),
        // Content nested as deep as the parser allows (32 containers in all).
        (#"{"type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"\#(token)","occurred_at":1800000000,"content_state":\#(String(repeating: "{\"a\":", count: 30))[1]\#(String(repeating: "}", count: 30))}"#, true),
        // Another event type.
        (#"{"type":"activity.updated","activity_id":"a","occurred_at":1800000000,"content_state":{}}"#, false),
        // An array of one: the same event (our reporter sends arrays).
        (#"[{"type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"\#(token)","occurred_at":1800000000}]"#, true),
    ] as [(String, Bool)])
    func unusualValidBodies(_ body: String, _ taken: Bool) throws {
        let (fast, tree) = Self.compare(body)
        #expect((fast != nil) == taken)
        #expect((try? tree.get())?.count == 1, "\(tree)")
    }

    // MARK: What it declines

    /// Each of the validator's refusals for a `push.sent`, and JSON errors: declined by the
    /// fast path, answered by `decode` exactly as before.
    @Test(arguments: [
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"id":"a","id":"b""#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"content_state":{"a":1,"a":2}"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"alert":{"title":"a","title":"b"}"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"extra":1"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"source":"app""#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"dismissal_policy":"after""#,
        #""type":"push.sent","event":"launch","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":7,"status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"\#(String(repeating: "x", count: 129))","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"start","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"start","booking_id":null,"status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":99,"latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":600,"latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200.5,"latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":"200","latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":-1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":3600001,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"priority":7,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"payload_bytes":1048577,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"reason":"\#(String(repeating: "r", count: 65))","push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"apns_id":"","push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"abc","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"0123456789abcdefg1","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"0123456789abcdef0","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":null,"occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T""#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":946684799.999"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":4102444800"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":"2027-02-30T00:00:00Z""#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"timestamp":"yesterday""#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"stale_date":1e300"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"relevance_score":1e10"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"content_state":[1]"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"content_state":{"big":"\#(String(repeating: "x", count: 4090))"}"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"attributes":"x""#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"alert":"x""#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"alert":{"subtitle":"x"}"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"alert":{"title":null}"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"alert":{"title":"\#(String(repeating: "x", count: 1025))"}"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"content_state":{"a":01}"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"content_state":{"a":1,}"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"content_state":{"a":[1,]}"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"content_state":{"a":1e999}"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"content_state":{"a":"\#u{1}"}"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"content_state":\#(String(repeating: "{\"a\":", count: 32))1\#(String(repeating: "}", count: 32))"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000,"#,
        #""type":"push.sent ","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000"#,
        #""type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"T","occurred_at":1800000000} {"#,
    ])
    func invalidBodiesAreDeclinedAndAnsweredAsBefore(_ members: String) throws {
        let body = "{" + members.replacingOccurrences(of: #""push_token":"T""#, with: #""push_token":"\#(Self.token)""#) + "}"
        let (fast, tree) = Self.compare(body)
        #expect(fast == nil, "\(body)")
        guard case .failure = tree else {
            Issue.record("expected an error: \(body)")
            return
        }
    }

    @Test func invalidUTF8AndAByteOrderMarkAreDeclined() {
        let valid = Array(#"{"type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1,"push_token":"\#(Self.token)","occurred_at":1800000000}"#.utf8)
        #expect(Self.compare(valid).fast != nil)
        #expect(Self.compare([0xEF, 0xBB, 0xBF] + valid).fast == nil)
        // Inside the value of activity_id: truncated, overlong, surrogate, above U+10FFFF,
        // a lone continuation byte.
        let value = valid.indices.first { valid[$0...].starts(with: Array(#""a","status""#.utf8)) }! + 1
        for bad: [UInt8] in [[0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xE2, 0x82]] {
            var body = valid
            body.insert(contentsOf: bad, at: value)
            #expect(Self.compare(body).fast == nil, "\(bad)")
        }
    }

    /// The parser's limits hold on the fast path too: whatever they refuse, it declines.
    @Test func tightLimitsAreRespected() {
        let body = Array(#"{"type":"push.sent","event":"update","activity_id":"a","status":200,"latency_ms":1.25,"push_token":"\#(Self.token)","occurred_at":1800000000,"content_state":{"a":{"b":[1,2,3]}}}"#.utf8)
        func fast(_ change: (inout JSONParser.Limits) -> Void, maxEvents: Int = 1000) -> Event? {
            var d = IngestDecoder()
            change(&d.limits)
            d.maxEvents = maxEvents
            return d.fastPushEvent(body)
        }
        #expect(fast { _ in } != nil)
        #expect(fast({ _ in }, maxEvents: 0) == nil)
        #expect(fast { $0.maxDepth = 4 } != nil)
        #expect(fast { $0.maxDepth = 3 } == nil)
        #expect(fast { $0.maxStringBytes = 64 } != nil)
        #expect(fast { $0.maxStringBytes = 63 } == nil)
        #expect(fast { $0.maxNumberLength = 10 } != nil)
        #expect(fast { $0.maxNumberLength = 9 } == nil)
        #expect(fast { $0.maxContainerCount = 8 } != nil)
        #expect(fast { $0.maxContainerCount = 7 } == nil)
        var d = IngestDecoder()
        d.limits.maxContainerCount = 2
        #expect(d.fastPushEvent(body) == nil)
        #expect(throws: APIError.self) { try d.decode(body, format: .json) }
    }

    /// The short decimals read without parsing text (`JSONGrammar.doubleValue`, which both the
    /// scanner and `JSONNumber.doubleValue` use) are the doubles `Double(String)` reads, bit for bit.
    @Test func shortDecimalsReadAsTheParserReadsThem() {
        var random = Seeded(state: 7)
        var literals = ["0", "-0", "0.0", "-0.0", "1800000000.0017", "999999999999999", "0.000000000000001",
                        "123456789.012345", "-4102444799.999", "0.1", "0.3", "1.50", "37.0", "9007199254740993"]
        for _ in 0..<20_000 {
            let digits = Int.random(in: 1...16, using: &random)
            var text = String(Int.random(in: 1...9, using: &random))
            for _ in 1..<digits { text += String(Int.random(in: 0...9, using: &random)) }
            let point = Int.random(in: 0...digits, using: &random)
            if point < digits { text.insert(".", at: text.index(text.startIndex, offsetBy: point == 0 ? 1 : point)) }
            if Bool.random(using: &random) { text = "-" + text }
            literals.append(text)
        }
        for literal in literals {
            let bytes = Array(literal.utf8)
            let read = bytes.withUnsafeBytes { JSONGrammar.doubleValue($0, from: 0, to: $0.count) }
            #expect(read?.bitPattern == Double(literal)?.bitPattern, "\(literal)")
        }
    }

    /// The search that declines other bodies at once finds the type wherever it is.
    @Test func theTypeIsFoundAnywhere() {
        let pattern = #""push.sent""#
        var random = Seeded(state: 11)
        let alphabet = Array(#""pushsent.ab ,:{}"#.utf8)
        for _ in 0..<5000 {
            let count = Int.random(in: 0...40, using: &random)
            let bytes = (0..<count).map { _ in alphabet.randomElement(using: &random)! }
            let expected = String(decoding: bytes, as: UTF8.self).contains(pattern)
            #expect(bytes.withUnsafeBufferPointer(PushEventScanner.mentionsPushSent) == expected,
                    "\(String(decoding: bytes, as: UTF8.self))")
            var planted = bytes
            planted.insert(contentsOf: Array(pattern.utf8), at: Int.random(in: 0...count, using: &random))
            #expect(planted.withUnsafeBufferPointer(PushEventScanner.mentionsPushSent))
        }
    }

    // MARK: Differential, at random

    /// The demo's SplitMix64 as a generator: seeded, so that a failure replays.
    struct Seeded: RandomNumberGenerator {
        private var random: DemoRandom
        init(state: UInt64) { random = DemoRandom(seed: state) }
        mutating func next() -> UInt64 { random.next() }
    }

    static let seeds: [String] = [
        benchBody(17),
        benchBody(4),
        #"{"id":"e1","type":"push.sent","activity_id":"a","booking_id":"BK-1","attributes_type":"RideAttributes","occurred_at":"2027-01-15T09:00:00.250+01:00","app":"com.example.ride","event":"update","status":410,"latency_ms":12.5,"push_token":"\#(token)","priority":5,"reason":"Unregistered","apns_id":"x","apns_unique_id":"y","payload_bytes":0,"timestamp":"2027-01-15T08:00:00Z","content_state":{"k":[1,{"z":null}]},"stale_date":1800000900,"dismissal_date":"2027-01-15T07:00:00-01:00","relevance_score":50,"alert":{"title":"Zoë","body":"2 min"},"attributes":{"name":"Ride"}}"#,
        #"{"type":"push.sent","event":"start","booking_id":"BK-9","attributes_type":"RideAttributes","status":0,"latency_ms":10000,"push_token":"\#(token.uppercased())","occurred_at":1.8e9,"attributes":{"name":"x"},"content_state":{ "a" : 1 }}"#,
        #"{"apns_id":"0d4c3f2e","event":"update","id":"ev-push","latency_ms":42.5,"occurred_at":"2026-11-18T11:06:43.125Z","payload_bytes":231,"priority":10,"push_token":"\#(token)","status":200,"timestamp":"2026-11-18T11:06:43Z","type":"push.sent","activity_id":"A1B2","booking_id":null}"#,
    ]

    /// Pieces that mutations insert: JSON's punctuation, tricky numbers and strings, fields.
    static let pieces: [String] = [
        "\"", "\\", "{", "}", "[", "]", ",", ":", " ", "\n", "\t", "0", "1", "9", "-", ".", "e", "E", "+", "n", "null",
        "true", "false", "1e3", "-0", "1.50", "1e999", "0.1e-99", "00", "\\u00e9", "\\/", "é", "🚕", "\u{2028}", "<", "&",
        "\u{1}", "\"id\":\"x\",", "\"id\":null,", "\"status\":0,", "\"priority\":5,", "\"booking_id\":null,",
        "\"alert\":{\"title\":\"t\"},", "\"content_state\":{\"a\":1},", "\"event\":\"start\",", "\"x\":1,",
        "\"occurred_at\":\"2027-01-15T08:00:00Z\",", "\"relevance_score\":-0,", "2027-01-15T08:00:00.5+02:00",
        "ABCDEF", "abcdef0123456789", String(repeating: "x", count: 130),
    ]

    /// `body` with one to three random mutations: bytes deleted, repeated, replaced, pieces
    /// inserted, values swapped.
    static func mutated(_ body: [UInt8], using random: inout Seeded) -> [UInt8] {
        var body = body
        for _ in 0..<[1, 1, 1, 2, 3].randomElement(using: &random)! {
            let at = Int.random(in: 0..<body.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                body.removeSubrange(at..<min(body.count, at + Int.random(in: 1...4, using: &random)))
            case 1:
                body.insert(contentsOf: body[at..<min(body.count, at + Int.random(in: 1...12, using: &random))], at: at)
            case 2:
                body[at] = Self.pieces.randomElement(using: &random)!.utf8.first!
            case 3:
                body.insert(contentsOf: Array(Self.pieces.randomElement(using: &random)!.utf8), at: at)
            case 4:
                // Swap the values after two colons (up to the next comma or brace).
                let colons = body.indices.filter { body[$0] == UInt8(ascii: ":") }
                guard colons.count >= 2 else { continue }
                let a = colons.randomElement(using: &random)!, b = colons.randomElement(using: &random)!
                func valueEnd(_ from: Int) -> Int {
                    body[(from + 1)...].firstIndex { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "}") } ?? body.count
                }
                let (first, second) = (min(a, b), max(a, b))
                let firstEnd = valueEnd(first), secondEnd = valueEnd(second)
                guard firstEnd <= second else { continue }
                let one = Array(body[(first + 1)..<firstEnd]), two = Array(body[(second + 1)..<secondEnd])
                body.replaceSubrange((second + 1)..<secondEnd, with: one)
                body.replaceSubrange((first + 1)..<firstEnd, with: two)
            default:
                body[at] = UInt8.random(in: 0...255, using: &random)
            }
            if body.isEmpty { break }
        }
        return body
    }

    /// Mutations of valid push bodies (bytes deleted, repeated, replaced, pieces inserted,
    /// values swapped): whenever the fast path takes one, the general way makes the same event.
    @Test func randomMutationsAgreeWithTheGeneralWay() {
        var random = Seeded(state: 20_260_601)
        var taken = 0, total = 0
        for _ in 0..<10_000 {
            let body = Self.mutated(Array(Self.seeds.randomElement(using: &random)!.utf8), using: &random)
            let (fast, _) = Self.compare(body)
            if fast != nil { taken += 1 }
            total += 1
        }
        // Enough of them stay valid for the comparison to mean something.
        #expect(taken > total / 20, "\(taken) of \(total) taken")
    }
    // MARK: NDJSON lines

    /// What both ways make of an NDJSON `body`: `decode` (each push line the fast path is sure
    /// of read by it) must answer exactly as the general way does, events or errors. Returns
    /// how many lines the fast path read.
    @discardableResult
    static func compareLines(_ body: [UInt8], firstLine: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        let decoded = Result { () throws(APIError) -> [Event] in try decoder.decode(body, format: .ndjson, firstLine: firstLine) }
        let general = Result { () throws(APIError) -> [Event] in try tree.decode(body, format: .ndjson, firstLine: firstLine) }
        let text = String(decoding: body.prefix(600), as: UTF8.self)
        switch (decoded, general) {
        case (.success(let a), .success(let b)):
            #expect(a.count == b.count, "\(text)", sourceLocation: sourceLocation)
            for (x, y) in zip(a, b) { #expect(x.differences(from: y) == [], "\(text)", sourceLocation: sourceLocation) }
        case (.failure(let a), .failure(let b)):
            #expect(a == b, "\(text)", sourceLocation: sourceLocation)
        default:
            Issue.record("decode answered \(decoded), the general way \(general): \(text)", sourceLocation: sourceLocation)
        }
        guard let items = try? decoder.items(of: body, format: .ndjson, firstLine: firstLine) else { return 0 }
        return items.filter { if case .read = $0 { true } else { false } }.count
    }

    @discardableResult
    static func compareLines(_ lines: [String], separator: String = "\n", sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        compareLines(Array(lines.joined(separator: separator).utf8), sourceLocation: sourceLocation)
    }

    static let start = #"{"id":"s1","type":"activity.started","activity_id":"a1","booking_id":"BK-1","attributes_type":"RideAttributes","app":"com.example.ride","occurred_at":1800000000,"attributes":{"name":"x"},"content_state":{"progress":0}}"#

    /// A batch of APNs results (the benchmark's batched script, the reporter's flushes) is
    /// read line by line by the fast path; other lines go the general way, in their places.
    @Test func pushLinesOfABatchTakeTheFastPath() throws {
        let pushes = (1...500).map(Self.benchBody)
        #expect(Self.compareLines(pushes) == 500)
        #expect(Self.compareLines(pushes, separator: "\r\n") == 500)
        #expect(Self.compareLines(pushes.map { " \t\($0) " }, separator: "\n\n \r\n") == 500)
        let mixed = [Self.start] + Array(pushes.prefix(9)) + [Self.start.replacingOccurrences(of: "\"s1\"", with: "\"s2\"")]
        let items = try Self.decoder.items(of: Array(mixed.joined(separator: "\n").utf8), format: .ndjson)
        #expect(items.map { if case .read = $0 { "read" } else { "parsed" } } == ["parsed"] + Array(repeating: "read", count: 9) + ["parsed"])
        #expect(Self.compareLines(mixed) == 9)
        // The general way alone reads none.
        #expect(try Self.tree.items(of: Array(pushes.joined(separator: "\n").utf8), format: .ndjson)
            .allSatisfy { if case .parsed = $0 { true } else { false } })
    }

    /// Errors are the general way's, line numbers and event indexes included, wherever the
    /// lines the fast path read stand.
    @Test func batchErrorsAreAnsweredAsBefore() {
        let push = Self.benchBody(17)
        let invalid = push.replacingOccurrences(of: #""status":200"#, with: #""status":"x""#)
        let bodies: [[String]] = [
            [push, push, "{", push],                                  // not JSON on line 3
            [push, invalid, push, invalid],                          // invalid events 1 and 3
            [push, "", invalid, "  ", push],                         // indexes count events, not lines
            [push, "\u{FEFF}" + push],                               // a byte order mark
            [push, "[\(push)]"],                                     // an array is not an event
            [push, push + " x"],
            [push, "{}", "[\(push)", push],
            ["", " ", "\t"],                                         // no events
            [push, Self.start.replacingOccurrences(of: #""attributes_type":"RideAttributes","#, with: "")],
            Array(repeating: push, count: 1001),                     // too many
        ]
        for lines in bodies { Self.compareLines(lines) }
        Self.compareLines(Array([push, "{"].joined(separator: "\n").utf8), firstLine: 41)
        // Both ways share the code after the lines are read, so pin what they answer.
        func answer(_ lines: [String], firstLine: Int = 1) -> APIError? {
            do { _ = try Self.decoder.decode(Array(lines.joined(separator: "\n").utf8), format: .ndjson, firstLine: firstLine) } catch {
                return error
            }
            return nil
        }
        guard case .badRequest(let message)? = answer([push, "", push, "{", push], firstLine: 41) else {
            Issue.record("not a bad request")
            return
        }
        #expect(message.hasPrefix("line 44 is not valid JSON: "), "\(message)")
        guard case .invalidEvents(let errors)? = answer([push, invalid, "", push, invalid]) else {
            Issue.record("not invalid events")
            return
        }
        #expect(errors.map(\.index) == [1, 3] && errors.allSatisfy { $0.field == "status" }, "\(errors)")
    }

    /// Mutated lines among valid ones: the whole batch answers as the general way does.
    @Test func randomMutationsInABatchAgreeWithTheGeneralWay() {
        var random = Seeded(state: 20_261_206)
        var read = 0
        for _ in 0..<2_000 {
            var lines: [[UInt8]] = (0..<Int.random(in: 1...6, using: &random)).map { _ in Array(Self.seeds.randomElement(using: &random)!.utf8) }
            let at = Int.random(in: 0..<lines.count, using: &random)
            lines[at] = Self.mutated(lines[at], using: &random)
            read += Self.compareLines(Array(lines.joined(separator: [UInt8(ascii: "\n")])))
        }
        #expect(read > 2_000, "\(read) lines read by the fast path")
    }
}
