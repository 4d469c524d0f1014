import Foundation
import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// No raw push token anywhere: not in the database files, not in any response, not in the
/// log. Booking ids and content only behind the read token. Bearer tokens only from files.
@Suite struct PrivacyTests {
    static let ingestToken = "privacy-ingest-token-4c1d9e"
    static let readToken = "privacy-read-token-8b27f0aa"
    /// Random-looking tokens (a leak of a prefix or suffix would show) next to the scenario's.
    static let tokenD = "3f9c1e07b25a48d6e0c7a9f11b3d5e72c84a06f9d2e1b7c53a9e0f4d6c8b2a17"
    static let tokenE = "9e4b7d02c1f8a65e3b0d9c47f2a81e6d05c3b9a7e2f4d1c86b0a5e9d3f7c1b42"
    static let personal = "Zofia-Private-Driver"

    /// The raw tokens, and pieces of them, in the cases a client might send.
    static var secrets: [String] {
        var out: [String] = []
        for token in [Scenario.tokenA, Scenario.tokenB, Scenario.tokenC, tokenD, tokenE] {
            out += [token, token.uppercased()]
        }
        for token in [tokenD, tokenE] {
            out += [String(token.prefix(16)), String(token.suffix(16)), String(token.prefix(16)).uppercased()]
        }
        return out
    }

    /// Events beyond the scenario: tokens in upper case, a rotation, push-to-start, a duplicate.
    static var extraEvents: [JSONValue] {
        [
            JSONValue(["id": "pd1", "type": "activity.started", "activity_id": "ride-9", "booking_id": "BK-9009",
                       "attributes_type": "LiveActivityAttributes", "occurred_at": Scenario.t0 + 900,
                       "content_state": ["driverName": personal], "push_token": tokenD.uppercased()] as [String: Any]),
            JSONValue(["id": "pd2", "type": "activity.token_updated", "activity_id": "ride-9", "occurred_at": Scenario.t0 + 960,
                       "push_token": tokenE] as [String: Any]),
            Scenario.push("ride-9", "pd3", at: Scenario.t0 + 1000, token: tokenE, content: ["driverName": personal]),
            Scenario.push("ride-9", "pd4", at: Scenario.t0 + 1010, status: 410, reason: "Unregistered", token: tokenD),
            JSONValue(["id": "pd5", "type": "push.sent", "booking_id": "BK-9010", "occurred_at": Scenario.t0 + 1100,
                       "event": "start", "status": 200, "latency_ms": 20, "push_token": tokenD,
                       "attributes": ["startedAt": Scenario.t0]] as [String: Any]),
        ]
    }

    /// Requests that carry tokens as `push_token` and are refused: the refusal must not echo
    /// them. (A token pasted into another field, such as `type`, is echoed back to its sender
    /// like any other value of that field: the rule is about push tokens.)
    static func refusedBodies() -> [(contentType: String, body: String)] {
        let bad = Scenario.push("ride-9", "bad1", at: Scenario.t0, token: tokenD + "0", content: ["x": 1]).jsonString
        let rejected = "[" + Scenario.push("ride-9", "bad2", at: 1e300, token: tokenE).jsonString + "," + bad + "]"
        return [
            ("application/json", rejected),
            ("application/json", #"{"type":"activity.token_updated","push_token":""# + tokenD + #"","push_token":""# + tokenE + #""}"#),
            ("application/json", #"{"type":"activity.updated","activity_id":"a","occurred_at":1795000000,"content_state":{},"push_token":""# + tokenD + #""}"#),
            ("application/json", Scenario.push("a", "bad4", at: Scenario.t0, token: "zz" + tokenD).jsonString),
            ("application/json", Scenario.push("a", "bad5", at: Scenario.t0, token: String(repeating: tokenE, count: 20)).jsonString),
            ("application/json", #"{"type":"activity.token_updated","activity_id":"a","occurred_at":1795000000,"push_token":{"t":""# + tokenD + #""}}"#),
            ("application/json", #"{"push_token":""# + tokenE + #"" nope}"#),
            ("application/x-ndjson", Scenario.push("ride-9", "bad3", at: Scenario.t0, token: tokenD).jsonString + "\n{" + tokenE),
            ("text/plain", #"{"push_token":""# + tokenE + #""}"#),
        ]
    }

    static func leaks(in text: String) -> [String] {
        secrets.filter { text.contains($0) }
    }

    static func leaks(in data: Data) -> [String] {
        secrets.filter { data.range(of: Data($0.utf8)) != nil }
    }

    /// Everything the read API and /metrics return after the events, as (what, text).
    static func readEverything(_ client: HTTPClient, token: String?) throws -> [(String, String)] {
        let auth = token.map { [("Authorization", "Bearer \($0)")] } ?? []
        var out: [(String, String)] = []
        func get(_ path: String) throws -> String {
            let r = try client.request("GET", path, headers: auth)
            out.append((path, r.text))
            return r.text
        }
        var activityIDs: Set<String> = ["ride-1", "ride-2", "timer-1", "ride-9", "ghost"]
        var bookingIDs: Set<String> = ["BK-1042", "BK-1043", "BK-2001", "BK-9009", "BK-9010"]
        var listed: Set<String> = []
        for state in ["", "?state=active", "?state=stale", "?state=ended", "?state=dismissed"] {
            let list = try JSONParser.parse(Array(try get("/api/activities" + state).utf8))
            for a in list["activities"]?.arrayValue ?? [] {
                a["activity_id"]?.stringValue.map { _ = activityIDs.insert($0); _ = listed.insert($0) }
                a["booking_id"]?.stringValue.map { _ = bookingIDs.insert($0) }
            }
        }
        for id in activityIDs.sorted() { _ = try get("/api/activities/" + id) }
        for id in bookingIDs.sorted() { _ = try get("/api/bookings/" + id) }
        for path in ["/metrics", "/-/ready", "/-/healthy", "/"] { _ = try get(path) }
        #expect(token == nil || listed.isSuperset(of: ["ride-1", "ride-2", "timer-1", "ride-9"]), "\(listed)")
        return out
    }

    @Test func noRawPushTokenInFilesOrResponses() throws {
        let server = try TestServer {
            $0.ingestToken = Self.ingestToken
            $0.readToken = Self.readToken
        }
        defer { server.stop() }
        var seen: [(String, String)] = []
        var r = try server.post(events: Scenario.events + Self.extraEvents, token: Self.ingestToken)
        #expect(r.status == 200, "\(r.text)")
        seen.append(("POST", r.text))
        r = try server.post(events: Self.extraEvents, token: Self.ingestToken)
        #expect(r.text.contains("\"duplicates\":5"))
        seen.append(("POST duplicates", r.text))
        for (contentType, body) in Self.refusedBodies() {
            for token in [Self.ingestToken, nil] {
                r = try server.post(body, contentType: contentType, token: token)
                #expect((400..<500).contains(r.status))
                seen.append(("POST refused \(r.status)", r.text))
            }
        }
        let reads = try Self.readEverything(server.client, token: Self.readToken)
        seen += reads
        let activity = try JSONParser.parse(Array(reads.first { $0.0 == "/api/activities/ride-9" }!.1.utf8))
        #expect(activity["token"]?["fingerprint"]?.stringValue == TokenFingerprint.of(Self.tokenE))
        #expect(activity["events"]?[0]?["token_fingerprint"]?.stringValue == TokenFingerprint.of(Self.tokenD))

        for (what, text) in seen {
            #expect(Self.leaks(in: text).isEmpty, "raw token in \(what): \(text.prefix(300))")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: server.directory)
        #expect(files.contains("monitor.sqlite-wal"), "the WAL is checked while the server runs: \(files)")
        func checkFiles(_ when: String) throws {
            for file in try FileManager.default.contentsOfDirectory(atPath: server.directory) {
                let data = FileManager.default.contents(atPath: server.directory + "/" + file) ?? Data()
                #expect(Self.leaks(in: data).isEmpty, "raw token in \(file) (\(data.count) bytes) \(when)")
            }
        }
        try checkFiles("while running")
        server.stop(keepFiles: true)
        try checkFiles("after stop")
        print("privacy: \(seen.count) responses and the database files checked for \(Self.secrets.count) token forms; none found")
    }

    /// Booking ids, activity ids and content are personal data: none of it is readable without
    /// the read token, and none of it is in /metrics, which Prometheus scrapes without one.
    @Test func personalDataOnlyBehindTheReadToken() throws {
        let server = try TestServer {
            $0.ingestToken = Self.ingestToken
            $0.readToken = Self.readToken
        }
        defer { server.stop() }
        #expect(try server.post(events: Scenario.events + Self.extraEvents, token: Self.ingestToken).status == 200)
        let personal = ["BK-1042", "BK-9009", "ride-1", "ride-9", "timer-1", Self.personal, "com.example.autopilot", "BK-"]
        for (what, text) in try Self.readEverything(server.client, token: nil) {
            if what.hasPrefix("/api/") {
                #expect(text == SecurityTests.unauthorized, "\(what) without the read token: \(text.prefix(200))")
            } else {
                #expect(personal.filter { text.contains($0) } == [], "personal data in \(what)")
            }
        }
        let withToken = try Self.readEverything(server.client, token: Self.readToken)
        #expect(withToken.first { $0.0 == "/api/bookings/BK-9009" }?.1.contains(Self.personal) == true)
    }

    /// The real binary: tokens come from files (never from arguments or the environment, where
    /// `ps` would show them), and its log holds no raw push token and no bearer token.
    @Test func theRealServerKeepsTokensOutOfArgumentsAndLogs() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("  \(Self.ingestToken)\n".utf8).write(to: URL(fileURLWithPath: dir + "/ingest.token"))
        try Data("\(Self.readToken)\n\n".utf8).write(to: URL(fileURLWithPath: dir + "/read.token"))
        let serve = try ServeProcess(["--db", dir + "/db.sqlite", "--ingest-token-file", dir + "/ingest.token"],
                                     environment: ["LAM_READ_TOKEN_FILE": dir + "/read.token"])
        let pid = serve.process.processIdentifier
        for name in ["cmdline", "environ"] {
            let data = FileManager.default.contents(atPath: "/proc/\(pid)/\(name)") ?? Data()
            #expect(!data.isEmpty)
            #expect(data.range(of: Data(Self.ingestToken.utf8)) == nil && data.range(of: Data(Self.readToken.utf8)) == nil,
                    "a bearer token is visible in /proc/\(pid)/\(name)")
        }
        let client = HTTPClient(port: serve.port)
        let events = JSONValue.array(Scenario.events + Self.extraEvents).jsonString
        let json = [("Content-Type", "application/json")]
        #expect(try client.request("POST", "/v1/events", headers: json, body: Array(events.utf8)).status == 401)
        #expect(try client.request("POST", "/v1/events", headers: json + [("Authorization", "Bearer " + Self.readToken)],
                                   body: Array(events.utf8)).status == 401)
        let ok = try client.request("POST", "/v1/events", headers: json + [("Authorization", "Bearer " + Self.ingestToken)],
                                    body: Array(events.utf8))
        #expect(ok.status == 200, "\(ok.text)")
        for (contentType, body) in Self.refusedBodies() {
            _ = try client.request("POST", "/v1/events", headers: [("Content-Type", contentType), ("Authorization", "Bearer " + Self.ingestToken)],
                                   body: Array(body.utf8))
        }
        #expect(try client.request("GET", "/api/activities", headers: [("Authorization", "Bearer " + Self.ingestToken)]).status == 401)
        let reads = try Self.readEverything(client, token: Self.readToken)
        #expect(reads.allSatisfy { Self.leaks(in: $0.1).isEmpty })
        client.close()
        let (status, log) = serve.stop()
        #expect(status == 0)
        #expect(log.contains("listening on") && log.contains("stopped"), "\(log)")
        #expect(Self.leaks(in: log).isEmpty, "raw push token in the log:\n\(log)")
        #expect(!log.contains(Self.ingestToken) && !log.contains(Self.readToken), "bearer token in the log:\n\(log)")
        for file in try FileManager.default.contentsOfDirectory(atPath: dir) where file.hasPrefix("db.sqlite") {
            let data = FileManager.default.contents(atPath: dir + "/" + file) ?? Data()
            #expect(Self.leaks(in: data).isEmpty, "raw token in \(file)")
        }
        print("privacy (real binary): \(log.split(separator: "\n").count) log lines, \(reads.count) responses and the database checked; no token found")
    }

    /// A token never comes from an argument: `serve` has no such option, and one given anyway
    /// is a usage error. Token files must hold different tokens of at least 16 characters.
    @Test func tokensOnlyFromFiles() throws {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let help = try CommandLineTests.run(["serve", "--help"])
        #expect(help.stdout.contains("--ingest-token-file") && help.stdout.contains("--read-token-file"))
        #expect(!help.stdout.contains("--ingest-token ") && !help.stdout.contains("--read-token "))
        for flag in ["--ingest-token", "--read-token", "--token"] {
            let r = try CommandLineTests.run(["serve", flag, Self.ingestToken, "--port", "0", "--db", dir + "/db.sqlite"])
            #expect(r.status == 2, "\(flag)")
            #expect(r.stderr.contains("unknown option"))
            #expect(!r.stderr.contains(Self.ingestToken), "the refused value is not echoed")
        }
        try Data(Self.ingestToken.utf8).write(to: URL(fileURLWithPath: dir + "/same.token"))
        try Data("short\n".utf8).write(to: URL(fileURLWithPath: dir + "/short.token"))
        var r = try CommandLineTests.run(["serve", "--ingest-token-file", dir + "/same.token", "--read-token-file", dir + "/same.token"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("must differ"))
        r = try CommandLineTests.run(["serve", "--read-token-file", dir + "/short.token"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("shorter than 16"))
        r = try CommandLineTests.run(["serve", "--read-token-file", dir + "/missing.token"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("cannot read"))
        // Only visible ASCII: a header carries nothing else reliably, and bytes that are not UTF-8
        // all read as U+FFFD, so any such bytes matched (a file of 16 0xFF bytes took any 16).
        let unusable: [String: [UInt8]] = [
            "binary": [UInt8](repeating: 0xFF, count: 16) + Array("0123456789abcdef".utf8),
            "two-lines": Array("first-line-0123456789\nsecond-line-0123456789\n".utf8),
            "inner-space": Array("correct horse battery staple".utf8),
            "non-ascii": Array("pässwörd-0123456789abcdef".utf8),
        ]
        for (name, bytes) in unusable {
            try Data(bytes).write(to: URL(fileURLWithPath: dir + "/\(name).token"))
            r = try CommandLineTests.run(["serve", "--port", "0", "--db", dir + "/db.sqlite", "--read-token-file", dir + "/\(name).token"])
            #expect(r.status == 2, "\(name): \(r.stderr)")
            #expect(r.stderr.contains("visible ASCII"), "\(name): \(r.stderr)")
            #expect(!r.stderr.contains("0123456789"), "the token is not echoed")
        }
    }
}
