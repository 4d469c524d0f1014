import HTTPServer
import Testing

@Suite struct HTTPRequestTests {
    @Test func headersAreLowercasedAndLookedUpCaseInsensitively() {
        let request = HTTPRequest(method: "POST", path: "/v1/events", query: ["a": "1"],
                                  headers: ["Content-Type": "application/json", "X-Trace": "t1"],
                                  body: Array("{}".utf8), remoteAddress: "127.0.0.1")
        #expect(request.headers == ["content-type": "application/json", "x-trace": "t1"])
        #expect(request.header("CONTENT-TYPE") == "application/json")
        #expect(request.header("x-TRACE") == "t1")
        #expect(request.header("Authorization") == nil)
    }

    @Test func headersDifferingOnlyInCaseAreJoined() {
        let request = HTTPRequest(method: "GET", path: "/", query: [:],
                                  headers: ["Accept": "a", "accept": "b"], body: [], remoteAddress: nil)
        let joined = request.header("accept")
        #expect(joined == "a, b" || joined == "b, a")
    }

    /// `headers` holds, under each lowercased name, what `header(_:)` answers for it, and no
    /// other name: repeated names in any case (also not ASCII) joined, empty values kept.
    @Test func headersHoldWhatHeaderAnswers() {
        let sent = ["Accept": "a", "accept": "b", "ACCEPT": "", "\u{212A}ey": "k1", "key": "k2",
                    "X-Empty": "", "Stra\u{DF}e": "w", "STRA\u{DF}E": "v"]
        let request = HTTPRequest(method: "GET", path: "/", headers: sent)
        let headers = request.headers
        #expect(Set(headers.keys) == Set(sent.keys.map { $0.lowercased() }))
        for name in sent.keys {
            #expect(headers[name.lowercased()] == request.header(name), "\(name)")
        }
        #expect(headers["accept"]?.split(separator: ",", omittingEmptySubsequences: false).count == 3)
        #expect(headers["x-empty"] == "")
    }

    /// Names are compared as a dictionary keyed by `lowercased()` compared them, also when
    /// they are not ASCII: the Kelvin sign lowercases to an ASCII "k".
    @Test func namesThatAreNotASCIIAreComparedLowercased() {
        let request = HTTPRequest(method: "GET", path: "/", headers: ["\u{212A}ey": "v", "Stra\u{DF}e": "w"])
        #expect(request.header("key") == "v")
        #expect(request.header("KEY") == "v")
        #expect(request.header("STRA\u{DF}E") == "w")
        #expect(request.header("strasse") == nil)
        #expect(request.headers == ["key": "v", "stra\u{DF}e": "w"])
    }

    /// A request made in process keeps each value exactly: empty, or with a NUL or any text.
    @Test func valuesAreKeptExactly() {
        let request = HTTPRequest(method: "GET", path: "/",
                                  headers: ["X-Nul": "a\u{0}b", "X-Empty": "", "X-Text": "caf\u{E9} \u{1F600}"])
        #expect(request.header("x-nul") == "a\u{0}b")
        #expect(request.header("x-empty") == "")
        #expect(request.header("x-text") == "caf\u{E9} \u{1F600}")
        #expect(request.header("x-none") == nil)
        #expect(request.header("x-nu") == nil)
        #expect(request.header("x-null") == nil)
    }

    @Test(arguments: [
        ("/", [""]), ("/metrics", ["metrics"]), ("/api/activities/", ["api", "activities", ""]),
        ("/api/bookings/2026%2F1042", ["api", "bookings", "2026/1042"]), ("//x", ["", "x"]),
        ("/%2e%2e/%2E%2e%2fsecret", ["..", "../secret"]), ("/a%20b+c", ["a b+c"]),
        ("/%E4%BA%88%E7%B4%84", ["\u{4E88}\u{7D04}"]), ("/raw\u{E9}", ["raw\u{E9}"]),
    ] as [(String, [String])])
    func pathSegmentsAreDecodedAfterSplitting(_ path: String, _ expected: [String]) {
        #expect(HTTPRequest(method: "GET", path: path).pathSegments == expected)
    }

    @Test(arguments: ["", "*", "api/x", "http://host/x", "/%", "/%4", "/%g0", "/a%00", "/%FF", "/%ED%A0%80", "/x/%E2%82"])
    func undecodablePathsHaveNoSegments(_ path: String) {
        #expect(HTTPRequest(method: "GET", path: path).pathSegments == nil)
    }
}
