import Foundation
import HTTPServer
import JSON
import Testing
@testable import LiveActivityMonitor

/// Access control and web safety over real HTTP: separate ingest and read tokens, 401s that
/// say nothing more, no way out of the web root, security headers on every answer, and JSON
/// that never reflects input unescaped.
@Suite struct SecurityTests {
    static let ingestToken = "ingest-token-0123456789abcdef"
    static let readToken = "read-token-fedcba9876543210"
    static let unauthorized = #"{"error":"unauthorized"}"#

    static func guarded() throws -> TestServer {
        try TestServer {
            $0.ingestToken = ingestToken
            $0.readToken = readToken
        }
    }

    static func authorization(_ value: String?) -> [(String, String)] {
        value.map { [("Authorization", $0)] } ?? []
    }

    @Test func theIngestTokenNeverReadsAndTheReadTokenNeverIngests() throws {
        let server = try Self.guarded()
        defer { server.stop() }
        let body = IngestTests.started("a").jsonString
        var r = try server.post(body, token: Self.readToken)
        #expect(r.status == 401)
        #expect(r.text == Self.unauthorized)
        #expect(try server.metric("liveactivity_ingest_events_total{type=\"activity.started\"}") == 0)
        #expect(try server.post(body, token: Self.ingestToken).status == 200)

        let routes = ["/api/activities", "/api/activities/a", "/api/bookings/BK-a", "/api/activities?state=active", "/api/shapes",
                      "/api/nowhere", "/api/activities?limit=oops", "/v1/other"]
        for path in routes {
            r = try server.get(path, token: Self.ingestToken)
            #expect(r.status == 401, "\(path) with the ingest token")
            #expect(r.text == Self.unauthorized, "\(path): \(r.text)")
            #expect(r.headers["www-authenticate"] == "Bearer")
        }
        #expect(try server.get("/api/activities", token: Self.readToken).status == 200)
        #expect(try server.get("/api/activities/a", token: Self.readToken).status == 200)
        #expect(try server.get("/api/bookings/BK-a", token: Self.readToken).status == 200)
        #expect(try server.get("/api/shapes", token: Self.readToken).status == 200)
        #expect(try server.metric("liveactivity_ingest_rejected_total{reason=\"unauthorized\"}") == 1)
    }

    /// Every way of getting the token wrong gets the same 401, with nothing in it that tells
    /// one mistake from another, or which routes exist, or whether an id is known.
    @Test func failedAuthenticationSaysNothingMore() throws {
        let server = try Self.guarded()
        defer { server.stop() }
        #expect(try server.post(events: [IngestTests.started("known")], token: Self.ingestToken).status == 200)
        let wrong: [String?] = [
            nil, "", "Bearer", "Bearer ", "Bearer" + Self.readToken, "Bearer\t" + Self.readToken,
            "Bearer " + Self.readToken + "x", "Bearer " + String(Self.readToken.dropLast()),
            "Bearer " + Self.readToken.uppercased(), "Basic " + Self.readToken, Self.readToken,
            "Bearer " + Self.ingestToken, "Bearer \(Self.readToken), Bearer \(Self.readToken)",
        ]
        var refused = 0
        for header in wrong {
            for path in ["/api/activities", "/api/activities/known", "/api/activities/unknown", "/api/bookings/BK-known", "/api/nope"] {
                let r = try server.client.request("GET", path, headers: Self.authorization(header))
                #expect(r.status == 401, "\(path) with \(header ?? "no header")")
                #expect(r.text == Self.unauthorized)
                #expect(r.headers["www-authenticate"] == "Bearer")
                if r.status == 401 { refused += 1 }
            }
            // The same mistakes with the ingest token (and the read token where it was the ingest one).
            let ingestHeader = header == "Bearer " + Self.ingestToken ? "Bearer " + Self.readToken
                : header?.replacingOccurrences(of: Self.readToken, with: Self.ingestToken)
            let r = try server.client.request("POST", "/v1/events", headers: [("Content-Type", "application/json")]
                                              + Self.authorization(ingestHeader),
                                              body: Array(IngestTests.started("b").jsonString.utf8))
            #expect(r.status == 401, "ingest with \(header ?? "no header")")
            #expect(r.text == Self.unauthorized)
            if r.status == 401 { refused += 1 }
        }
        print("authentication: \(refused) requests with a missing, malformed or wrong token refused with the same 401")
        #expect(try server.get("/api/activities/known", token: Self.readToken).status == 200)
        #expect(try server.get("/api/activities", token: Self.readToken).text.contains("\"known\""))
        // What RFC 6750 and RFC 9110 let a client write around the token is the same token: the
        // scheme in any case, more than one space after it, whitespace after the value.
        for header in ["bearer " + Self.readToken, "Bearer  " + Self.readToken, "Bearer " + Self.readToken + " \t"] {
            #expect(try server.client.request("GET", "/api/activities/known", headers: Self.authorization(header)).status == 200,
                    "\(header)")
        }
    }

    /// libmicrohttpd cuts a header value at its first NUL byte, so `Bearer <token>\0junk` reached
    /// the token check as `Bearer <token>` and was let in. Only the exact value is the token: a
    /// head with bytes the server cannot see is refused before any route runs.
    @Test func tokenFollowedByANulOrAnythingIsRefused() throws {
        let server = try Self.guarded()
        defer { server.stop() }
        let body = IngestTests.started("nul").jsonString
        // (A space alone is whitespace after the value, not part of it: `failedAuthenticationSaysNothingMore`.)
        let suffixes: [[UInt8]] = [[0], Array("\0junk".utf8), [0, 0x20], Array("\0 Bearer x".utf8), Array(" junk".utf8),
                                   Array("junk".utf8)]
        for (token, path, method) in [(Self.ingestToken, "/v1/events", "POST"), (Self.readToken, "/api/activities", "GET")] {
            for suffix in suffixes {
                let c = try RawConnection(port: server.server.port)
                defer { c.close() }
                var head = Array("\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(token)".utf8) + suffix
                head += Array("\r\nContent-Type: application/json\r\n".utf8)
                head += Array((method == "POST" ? "Content-Length: \(body.utf8.count)\r\n\r\n" + body : "\r\n").utf8)
                try c.send(head)
                let r = c.readResponse(seconds: 5)
                #expect(r?.status == 400 || r?.status == 401, "\(path) with \(suffix): \(r?.status ?? 0) \(r?.text ?? "no answer")")
                #expect(r?.text.contains("\"known\"") == false)
            }
        }
        #expect(try server.metric("liveactivity_ingest_events_total{type=\"activity.started\"}") == 0)
    }

    /// The answers libmicrohttpd used to make itself, as bare HTML pages (a header line without
    /// a colon, a broken chunk, a broken length, headers too large), carry the security headers
    /// like every other answer, and are JSON.
    @Test func libmicrohttpdsOwnRefusalsCarryTheSecurityHeaders() throws {
        let server = try TestServer()
        defer { server.stop() }
        let requests = [
            ("GET / HTTP/1.1\r\nHost: localhost\r\nno colon\r\n\r\n", 400),
            ("POST /v1/events HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
            ("POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1e3\r\n\r\n", 400),
            ("POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Length: 99999999999999999999\r\n\r\n", 413),
            ("GET / HTTP/1.1\r\nHost: localhost\r\nX: " + String(repeating: "x", count: 70_000) + "\r\n\r\n", 431),
            ("GET / HTTP/1.1\r\nHost: localhost\r\nX: " + String(repeating: "x", count: 32_600) + "\r\n\r\n", 431),
        ]
        for (request, status) in requests {
            let c = try RawConnection(port: server.server.port)
            defer { c.close() }
            try c.send(request)
            let r = c.readResponse(seconds: 5)
            #expect(r?.status == status, "\(request.prefix(80)): \(r?.text ?? "no answer")")
            #expect(r?.headers["content-type"] == "application/json", "\(request.prefix(80))")
            for name in Self.requiredHeaders {
                #expect(r?.headers[name] != nil, "\(request.prefix(80)) \(r?.status ?? 0) lacks \(name)")
            }
        }
    }

    /// The server binds loopback unless told otherwise.
    @Test func defaultsToLoopback() throws {
        #expect(MonitorConfiguration().host == "127.0.0.1")
        let server = try TestServer()
        defer { server.stop() }
        #expect(server.server.baseURL.hasPrefix("http://127.0.0.1:"))
        guard let external = Self.nonLoopbackIPv4() else { return }
        let status = try? HTTPClient(host: external, port: server.server.port, timeoutSeconds: 1).request("GET", "/-/healthy").status
        #expect(status == nil, "reachable on \(external)")
    }

    static func nonLoopbackIPv4() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                var a = sin.pointee.sin_addr
                _ = inet_ntop(AF_INET, &a, &host, socklen_t(host.count))
            }
            let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !text.hasPrefix("127.") { return text }
        }
        return nil
    }

    // MARK: Static files

    /// A web root inside a directory that also holds files the server must never serve, with
    /// symlinks pointing out of the root.
    struct WebRootFixture {
        let directory = TestServer.makeTemporaryDirectory()
        static let secret = "TOP-SECRET-OUTSIDE-THE-WEB-ROOT"
        var root: String { directory + "/web" }

        init() throws {
            let fm = FileManager.default
            try fm.createDirectory(atPath: directory + "/web/css", withIntermediateDirectories: true)
            try fm.createDirectory(atPath: directory + "/outside", withIntermediateDirectories: true)
            try Data("<!doctype html><title>ok</title>".utf8).write(to: URL(fileURLWithPath: root + "/index.html"))
            try Data("body{}".utf8).write(to: URL(fileURLWithPath: root + "/css/style.css"))
            try Data("hidden \(Self.secret)".utf8).write(to: URL(fileURLWithPath: root + "/.env"))
            for name in ["secret.txt", "Package.swift", "outside/secret.txt"] {
                try Data("\(Self.secret) \(name)".utf8).write(to: URL(fileURLWithPath: directory + "/" + name))
            }
            try fm.createSymbolicLink(atPath: root + "/leak.txt", withDestinationPath: directory + "/secret.txt")
            try fm.createSymbolicLink(atPath: root + "/relative-leak.txt", withDestinationPath: "../secret.txt")
            try fm.createSymbolicLink(atPath: root + "/outside", withDestinationPath: directory + "/outside")
            try fm.createSymbolicLink(atPath: root + "/etc", withDestinationPath: "/etc")
            try fm.createSymbolicLink(atPath: root + "/home.html", withDestinationPath: "index.html")
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    @Test func staticFilesNeverLeaveTheWebRoot() throws {
        let fixture = try WebRootFixture()
        defer { fixture.remove() }
        let server = try TestServer { $0.webRoot = fixture.root }
        defer { server.stop() }
        #expect(try server.get("/").text.contains("<title>ok</title>"))
        #expect(try server.get("/css/style.css").headers["content-type"] == "text/css; charset=utf-8")
        #expect(try server.get("/home.html").status == 200, "a symlink that stays inside the root is served")

        let attempts = [
            "/../secret.txt", "/../Package.swift", "/%2e%2e/Package.swift", "/%2E%2E/secret.txt", "/..%2fPackage.swift",
            "/..%2Fsecret.txt", "/%2e%2e%2fsecret.txt", "/.%2e/secret.txt", "/%2e./secret.txt", "/css/../../secret.txt",
            "/css/%2e%2e/%2e%2e/secret.txt", "/..\\secret.txt", "/..%5csecret.txt", "/%5c..%5csecret.txt",
            "//etc/passwd", "///etc/passwd", "/" + fixture.directory + "/secret.txt", fixture.directory + "/secret.txt",
            "/%2f" + fixture.directory.dropFirst() + "/secret.txt", "http://localhost/../secret.txt",
            "/leak.txt", "/relative-leak.txt", "/outside/secret.txt", "/etc/passwd", "/etc/hostname",
            "/.env", "/%2eenv", "/css/", "/css", "/.", "/./index.html", "/index.html/", "/index.html/..",
            "/..%00/secret.txt",
            // Encoded slashes: a segment holding "/" names no file, whatever surrounds it.
            "/css%2f..%2f..%2fsecret.txt", "/css%2F%2E%2E%2F%2E%2E%2Fsecret.txt", "/css/..%2F..%2Fsecret.txt",
            "/%2e%2e%2f%2e%2e%2fsecret.txt", "/%2fetc%2fpasswd", "/css%2fstyle.css", "/outside%2fsecret.txt",
            // A decoded NUL or a broken escape makes the path undecodable, not shorter.
            "/index.html%00", "/%00../secret.txt", "/index.html%00/../../secret.txt", "/index.html%", "/index%2.html",
            "/index.html%zz",
        ]
        var refused = 0
        for path in attempts {
            for method in ["GET", "HEAD"] {
                let r = try server.client.request(method, path)
                #expect(r.status == 404, "\(method) \(path) → \(r.status)")
                #expect(!r.text.contains(WebRootFixture.secret), "\(method) \(path) leaked the file")
                #expect(!r.text.contains("root:"), "\(method) \(path) leaked /etc/passwd")
                #expect(r.headers["x-content-type-options"] == "nosniff")
                if r.status == 404 { refused += 1 }
            }
        }
        print("path traversal: \(refused)/\(attempts.count * 2) attempts answered 404")
    }

    // MARK: Headers and escaping

    static let requiredHeaders = ["content-security-policy", "x-content-type-options", "referrer-policy", "x-frame-options"]

    @Test func securityHeadersOnEveryRouteAndStatus() throws {
        let fixture = try WebRootFixture()
        defer { fixture.remove() }
        let server = try TestServer {
            $0.ingestToken = Self.ingestToken
            $0.readToken = Self.readToken
            $0.webRoot = fixture.root
            $0.maxBodyBytes = 4096
        }
        defer { server.stop() }
        let json = [("Content-Type", "application/json")]
        let ingest = json + [("Authorization", "Bearer " + Self.ingestToken)]
        let read = [("Authorization", "Bearer " + Self.readToken)]
        let requests: [(String, String, [(String, String)], [UInt8], Int)] = [
            ("POST", "/v1/events", ingest, Array(IngestTests.started("a").jsonString.utf8), 200),
            ("POST", "/v1/events", json, Array("{}".utf8), 401),
            ("POST", "/v1/events", ingest, Array("{".utf8), 400),
            ("POST", "/v1/events", ingest, Array("[{}]".utf8), 422),
            ("POST", "/v1/events", [("Content-Type", "text/html"), ("Authorization", "Bearer " + Self.ingestToken)], [], 415),
            ("POST", "/v1/events", ingest, [UInt8](repeating: 0x20, count: 5000), 413),
            ("GET", "/v1/events", [], [], 405),
            ("DELETE", "/metrics", [], [], 405),
            ("GET", "/metrics", [], [], 200),
            ("HEAD", "/metrics", [], [], 200),
            ("GET", "/-/healthy", [], [], 200),
            ("GET", "/-/ready", [], [], 200),
            ("GET", "/api/activities", read, [], 200),
            ("GET", "/api/activities", [], [], 401),
            ("GET", "/api/activities?limit=0", read, [], 400),
            ("GET", "/api/activities/a", read, [], 200),
            ("GET", "/api/activities/none", read, [], 404),
            ("GET", "/api/bookings/BK-a", read, [], 200),
            ("POST", "/api/activities", read, [], 405),
            ("GET", "/", [], [], 200),
            ("GET", "/css/style.css", [], [], 200),
            ("GET", "/missing.js", [], [], 404),
            ("GET", "/../secret.txt", [], [], 404),
        ]
        for (method, path, headers, body, status) in requests {
            let r = try server.client.request(method, path, headers: headers, body: body)
            #expect(r.status == status, "\(method) \(path): \(r.text.prefix(200))")
            for name in Self.requiredHeaders {
                #expect(r.headers[name] != nil, "\(method) \(path) \(r.status) lacks \(name)")
            }
            #expect(r.headers["content-security-policy"]?.contains("default-src 'self'") == true)
            #expect(r.headers["x-content-type-options"] == "nosniff")
            if path.hasPrefix("/api/") || path == "/v1/events" {
                #expect(r.headers["content-type"] == "application/json", "\(method) \(path) \(r.status)")
            }
            // What the read API answers (bookings, ids) is kept by no browser or proxy.
            if path.hasPrefix("/api/") {
                #expect(r.headers["cache-control"] == "no-store", "\(method) \(path) \(r.status)")
            }
        }
        // The 413 the HTTP layer sends itself, from the headers alone, carries them too.
        let c = try RawConnection(port: server.server.port)
        try c.send("POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n")
        let r = c.readResponse(seconds: 2)
        #expect(r?.status == 413)
        for name in Self.requiredHeaders { #expect(r?.headers[name] != nil, "early 413 lacks \(name)") }
    }

    /// Input that reaches a JSON response (ids in paths and bodies, unknown field names and
    /// types, a content type) comes back escaped: no `<` or `>` byte ever leaves the API.
    @Test func reflectedInputIsEscaped() throws {
        let server = try TestServer()
        defer { server.stop() }
        let id = "<svg onload=alert(1)>", booking = "<img src=x onerror=alert(1)>&"
        let event = JSONValue([
            "type": "activity.started", "activity_id": id, "booking_id": booking, "attributes_type": "</script><b>",
            "occurred_at": TestServer.base - 60, "content_state": ["driverName": "</script><script>alert(2)</script>"],
            "push_token": IngestTests.token, "app": "&amp;",
        ] as [String: Any])
        #expect(try server.post(events: [event]).status == 200)

        let escapedID = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        var responses: [(String, HTTPClient.Response)] = []
        for path in ["/api/activities", "/api/activities?q=%3Cscript", "/api/activities/" + escapedID,
                     "/api/bookings/" + booking.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                     "/api/activities/%3Cb%3Enope%3Cb%3E", "/api/bookings/%3Cscript%3E", "/api/activities/<script>"] {
            responses.append((path, try server.get(path)))
        }
        let badEvents = #"[{"type":"<script>","occurred_at":1},{"type":"activity.stale","activity_id":"a","occurred_at":1795000000,"<script>":1}]"#
        responses.append(("422", try server.post(badEvents)))
        responses.append(("415", try server.post("{}", contentType: "text/<script>")))
        responses.append(("400", try server.post(#"{"<script>":1,"<script>":2}"#)))
        for (path, r) in responses {
            #expect(r.headers["content-type"] == "application/json", "\(path)")
            #expect(!r.body.contains(UInt8(ascii: "<")) && !r.body.contains(UInt8(ascii: ">")), "\(path): \(r.text)")
            #expect((try? JSONParser.parse(r.body)) != nil, "\(path) is not JSON: \(r.text)")
        }
        let one = responses[2].1
        #expect(one.status == 200)
        #expect(one.text.contains(#""activity_id":"\u003csvg onload=alert(1)\u003e""#), "\(one.text)")
        #expect(one.text.contains(#""booking_id":"\u003cimg src=x onerror=alert(1)\u003e\u0026""#), "\(one.text)")
        #expect(one.text.contains(#"\u003c/script\u003e\u003cscript\u003ealert(2)"#), "\(one.text)")
        #expect(one.text.contains(#""app":"\u0026amp;""#))
        #expect(try JSONParser.parse(one.body)["activity_id"]?.stringValue == id, "escaping is lossless")
        #expect(responses[4].1.status == 404)
        #expect(responses[4].1.text == #"{"error":"no activity \"\u003cb\u003enope\u003cb\u003e\""}"#)
        #expect(responses[7].1.status == 422)
        #expect(responses[7].1.text.contains(#"unknown type \"\u003cscript\u003e\""#))
        #expect(responses[8].1.status == 415)
    }

    // MARK: Token comparison

    /// The time to compare a guess must not depend on the secret's length: a loop over the
    /// longer of the two inputs runs as long as the secret for every shorter guess, so timing
    /// guesses of growing length shows where the secret ends.
    @Test func comparisonTimeDoesNotRevealTheTokenLength() {
        func fastest(_ guess: String, _ secret: String) -> Duration {
            let clock = ContinuousClock()
            var best = Duration.seconds(1)
            for _ in 0..<50 {
                let t = clock.measure { _ = ConstantTime.equals(guess, secret) }
                best = min(best, t)
            }
            return best
        }
        let long = String(repeating: "k", count: 1 << 20), short = String(repeating: "k", count: 16)
        let againstLong = fastest("x", long), againstShort = fastest("x", short)
        // Equal work would give a ratio near 1; a loop over a 1 MiB secret gives thousands.
        #expect(againstLong < againstShort * 50 + .microseconds(20),
                "a 1-byte guess took \(againstLong) against a 1 MiB token, \(againstShort) against a 16-byte one")
        #expect(ConstantTime.equals(short, short) && !ConstantTime.equals(short + "k", short)
                && !ConstantTime.equals(String(short.dropLast()), short) && !ConstantTime.equals("", short)
                && !ConstantTime.equals("kkkkkkkkkkkkkkkj", short) && !ConstantTime.equals(short + short, short))
    }

    // MARK: DNS rebinding

    /// One request with the `Host` header given (HTTPClient always sends its own).
    static func raw(_ server: TestServer, _ method: String, _ path: String, host: String, token: String? = nil,
                    body: String = "") throws -> RawResponse? {
        let c = try RawConnection(port: server.server.port)
        defer { c.close() }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if method == "POST" { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        _ = try? c.send(head + "\r\n" + body)  // a refusal may close first: the answer counts
        return c.readResponse(seconds: 5)
    }

    /// A web page can make its own name resolve to 127.0.0.1 and then read a loopback server as
    /// its own origin. Browsers send the name they asked for in `Host`: with no token to guard
    /// them, `/api/*` and ingest answer only loopback names.
    @Test(arguments: [
        ("localhost", true), ("LOCALHOST", true), ("LocalHost.:9464", true), ("localhost:", true),
        ("a.b.localhost", true), ("dashboard.LOCALHOST.:80", true), ("127.0.0.1", true), ("127.255.0.9:1", true),
        ("[::1]", true), ("[::1]:9464", true), ("[0:0:0:0:0:0:0:1]", true), ("127.0.0.1.", true),
        ("localhost:9464x", false), ("localhost:1@attacker.example", false), ("localhost.attacker.example", false),
        ("xlocalhost", false), (".localhost", true), ("127.0.0.1.attacker.example", false), ("128.0.0.1", false),
        ("::1", false), ("[::1", false), ("[::1]x", false), ("[::2]", false), ("[::ffff:127.0.0.1]", false),
        ("", false), ("localhost:+80", false), ("localhost:٣", false), ("localhoſt", false), ("127.0.0.1:80:80", false),
    ])
    func loopbackNamesAreRecognisedByTheirBytes(host: String, loopback: Bool) {
        #expect(LoopbackHost.isLoopbackName(host) == loopback)
    }

    @Test func dnsRebindingCannotReachAnOpenLoopbackServer() throws {
        let server = try TestServer()
        defer { server.stop() }
        #expect(try server.post(events: [IngestTests.started("a")]).status == 200)
        let port = server.server.port
        let stale = #"{"type":"activity.stale","activity_id":"a","occurred_at":1795000000}"#
        for host in ["attacker.example", "attacker.example:\(port)", "127.0.0.1.attacker.example:\(port)",
                     "localhost.attacker.example", "localhost:\(port)@attacker.example", "10.0.0.1", "[::2]:\(port)", ""] {
            for path in ["/api/activities", "/api/activities/a", "/api/bookings/BK-a", "/api/nope"] {
                let r = try Self.raw(server, "GET", path, host: host)
                #expect(r?.status == 403, "\(path) for Host \(host): \(r?.text ?? "no answer")")
                #expect(r?.text.contains("BK-a") == false)
            }
            let r = try Self.raw(server, "POST", "/v1/events", host: host, body: stale)
            #expect(r?.status == 403, "ingest for Host \(host): \(r?.text ?? "no answer")")
            // Nothing here holds personal data: the page and Prometheus keep working.
            for path in ["/", "/metrics", "/-/healthy"] {
                #expect(try Self.raw(server, "GET", path, host: host)?.status == 200, "\(path) for Host \(host)")
            }
        }
        #expect(try server.metric("liveactivity_ingest_events_total{type=\"activity.stale\"}") == 0)
        for host in ["localhost", "localhost:\(port)", "LocalHost.:\(port)", "dashboard.localhost:\(port)",
                     "127.0.0.1:\(port)", "127.1.2.3", "[::1]:\(port)"] {
            #expect(try Self.raw(server, "GET", "/api/bookings/BK-a", host: host)?.status == 200, "Host \(host)")
        }
        #expect(try Self.raw(server, "POST", "/v1/events", host: "localhost:\(port)", body: stale)?.status == 200)

        // A token guards the route whatever the name (a reverse proxy may pass its own).
        let guarded = try Self.guarded()
        defer { guarded.stop() }
        #expect(try Self.raw(guarded, "GET", "/api/activities", host: "monitor.example.com", token: Self.readToken)?.status == 200)
        #expect(try Self.raw(guarded, "GET", "/api/activities", host: "monitor.example.com")?.status == 401)
        #expect(try Self.raw(guarded, "POST", "/v1/events", host: "monitor.example.com", token: Self.ingestToken,
                             body: stale)?.status == 200)
    }
}
