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
}
