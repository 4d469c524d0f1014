import Dispatch
import HTTPServer
import Testing

/// Live tests of a request's header fields: copied from libmicrohttpd once, with the head, and
/// read only when a handler asks, from any thread, for as long as the request is kept.
@Suite struct HTTPServerHeaderTests {
    /// The handler answers from another thread, reading the fields there while its connection is
    /// suspended; the requests are read again after their connection served others (libmicrohttpd
    /// reuses, and zeroes, its memory for each request) and closed.
    @Test func fieldsOutliveTheirConnection() throws {
        let kept = Locked<[HTTPRequest]>([])
        var configuration = HTTPServer.Configuration()
        configuration.connectionTimeoutSeconds = 5
        configuration.threadPoolSize = 1
        let server = try HTTPServer(configuration: configuration, answering: { request, responder in
            kept.withLock { $0.append(request) }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) {
                responder.respond(.text(request.header("x-id") ?? "none"))
            }
        })
        defer { server.stop() }
        let ids = ["first-" + String(repeating: "a", count: 40), "second-" + String(repeating: "b", count: 30), "third"]
        let connection = try RawConnection(port: server.port, receiveTimeout: 5)
        for id in ids {
            #expect(try connection.get("/" + id, headers: ["X-Id: \(id)", "X-Pad: \(String(id.reversed()))"]).text == id)
        }
        connection.close()
        let other = try RawConnection(port: server.port, receiveTimeout: 5)
        for _ in 0..<3 {
            #expect(try other.get("/other", headers: ["X-Id: " + String(repeating: "z", count: 60)]).status == 200)
        }
        let requests = kept.value
        try #require(requests.count == ids.count + 3)
        for (request, id) in zip(requests, ids) {
            #expect(request.header("X-ID") == id)
            #expect(request.header("x-pad") == String(id.reversed()))
            #expect(request.headers == ["host": "test", "x-id": id, "x-pad": String(id.reversed())])
        }
    }

    /// Repeated fields, whatever the case of their names, are one value joined with ", " in the
    /// order received, both for `header(_:)` and in `headers`.
    @Test func repeatedFieldsAreJoinedInTheOrderReceived() throws {
        let seen = Locked<HTTPRequest?>(nil)
        let server = try HTTPServer.forTesting { request in
            seen.withLock { $0 = request }
            return .text("ok")
        }
        defer { server.stop() }
        let response = try RawConnection(port: server.port)
            .get("/", headers: ["X-Tag: one", "Accept: text/plain", "x-tag: two", "X-TAG: three"])
        #expect(response.status == 200)
        let request = try #require(seen.value)
        #expect(request.header("x-tag") == "one, two, three")
        #expect(request.header("X-Tag") == "one, two, three")
        #expect(request.headers == ["host": "test", "accept": "text/plain", "x-tag": "one, two, three"])
    }

    /// Field values are UTF-8; bytes that are not are replaced (U+FFFD), as they always were.
    @Test func fieldValuesAreReadAsUTF8() throws {
        let seen = Locked<HTTPRequest?>(nil)
        let server = try HTTPServer.forTesting { request in
            seen.withLock { $0 = request }
            return .text("ok")
        }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send(Array("GET / HTTP/1.1\r\nHost: test\r\nX-Name: caf".utf8) + [0xC3, 0xA9]
                            + Array("\r\nX-Raw: a".utf8) + [0xFF] + Array("b\r\n\r\n".utf8))
        #expect(try connection.readResponse().status == 200)
        let request = try #require(seen.value)
        #expect(request.header("x-name") == "caf\u{E9}")
        #expect(request.header("x-raw") == "a\u{FFFD}b")
    }
}
