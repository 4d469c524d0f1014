import CMicroHTTPD
import Synchronization

/// The part of a server that libmicrohttpd's callbacks reach through their `cls` pointer,
/// on its connection threads: the handler, the limits, and the counters `stop()` waits on.
///
/// Plain `Sendable`: every stored property is immutable or a `Mutex`/`Atomic`.
final class ServerCore: Sendable {
    let handler: HTTPHandler
    let maxBodyBytes: Int
    /// How much of an over-limit chunked body, counted from the limit, is read and discarded,
    /// hoping to reach its end and answer 413, before the connection is closed without an answer.
    let maxDiscardedBytes: Int
    let defaultHeaders: [(name: String, value: String)]
    let errorLog: (@Sendable (String) -> Void)?
    let serverAnswered: (@Sendable (_ path: String, _ status: Int) -> Void)?
    /// Requests presented to the access handler whose completion has not been reported yet.
    /// An atomic, not a `Mutex`: every request of every connection thread changes it twice, and
    /// with 64 threads on 2 processors a preempted lock holder left the others spinning in
    /// `_MutexHandle._lockSlow` (16 % of the HTTP limit's CPU in its slow rounds).
    let inFlight = Atomic(0)
    /// Set by `stop()`: responses then carry `Connection: close` so keep-alive connections drain.
    let stopping = Atomic(false)
    /// Closes connections too slow to send a request or take a response (slowloris).
    let watchdog: ConnectionWatchdog
    /// libmicrohttpd's messages while the daemon starts (nil once started), for the thrown error.
    private let startupLog = Mutex<[String]?>([])

    init(configuration: HTTPServer.Configuration, handler: @escaping HTTPHandler) {
        self.handler = handler
        self.maxBodyBytes = configuration.maxBodyBytes
        self.maxDiscardedBytes = max(configuration.maxBodyBytes, 64 << 10)
        self.defaultHeaders = configuration.defaultHeaders
        self.errorLog = configuration.errorLog
        self.serverAnswered = configuration.serverAnswered
        let errorLog = configuration.errorLog
        self.watchdog = ConnectionWatchdog(limitSeconds: configuration.connectionTimeoutSeconds) { errorLog?($0) }
    }

    /// Records one diagnostic from libmicrohttpd (or from this module).
    func log(_ message: String) {
        startupLog.withLock { messages in
            if messages != nil { messages!.append(message) }
        }
        errorLog?(message)
    }

    /// Ends start-up; returns what was logged during it.
    func finishStartup() -> [String] {
        startupLog.withLock { messages in
            defer { messages = nil }
            return messages ?? []
        }
    }

    /// Answers a body over `maxBodyBytes` (413) and closes the connection afterwards (the rest
    /// of the body is never read); `serverAnswered` is told.
    func queueBodyTooLarge(on connection: OpaquePointer, path: String) -> MHD_Result {
        serverAnswered?(path, 413)
        let response = HTTPResponse(status: 413,
                                    headers: [(name: "Content-Type", value: "application/json")],
                                    body: Array("{\"error\":\"request body exceeds \(maxBodyBytes) bytes\"}".utf8))
        return queue(response, on: connection, closeConnection: true)
    }

    /// Builds the request from what libmicrohttpd parsed and runs the handler.
    func run(connection: OpaquePointer, method: String, path: String, body: [UInt8]) -> HTTPResponse {
        var query: [String: String] = [:]
        for (name, value) in ValueCollector.values(of: .GET_ARGUMENT_KIND, on: connection) {
            query[name] = value
        }
        let headers = HTTPRequest.lowercased(ValueCollector.values(of: .HEADER_KIND, on: connection))
        let remote = CMicroHTTPD_client_address(connection).flatMap { SocketAddress.host(of: $0) }
        let request = HTTPRequest(method: method, path: path, query: query, lowercasedHeaders: headers,
                                  body: body, remoteAddress: remote)
        return handler(request)
    }

    /// Queues `response` plus the default headers; `closeConnection` adds `Connection: close`
    /// (also added while stopping). Returns libmicrohttpd's verdict: `.NO` closes the connection.
    func queue(_ response: HTTPResponse, on connection: OpaquePointer, closeConnection: Bool) -> MHD_Result {
        var status = response.status
        if !(100...999).contains(status) {
            log("HTTPServer: handler returned status \(status); answering 500 instead")
            status = 500
        }
        let mhdResponse = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                                            .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else {
            log("HTTPServer: libmicrohttpd could not allocate a response; closing the connection")
            return .NO
        }
        defer { MHD_destroy_response(mhdResponse) }

        var names = Set<String>()
        for header in response.headers {
            // libmicrohttpd computes Content-Length itself and refuses one set by hand.
            if header.name.lowercased() == "content-length" { continue }
            names.insert(header.name.lowercased())
            add(header, to: mhdResponse)
        }
        for header in defaultHeaders where !names.contains(header.name.lowercased()) {
            add(header, to: mhdResponse)
        }
        if (closeConnection || stopping.load(ordering: .relaxed)) && !names.contains("connection") {
            add((name: "Connection", value: "close"), to: mhdResponse)
        }
        let result = MHD_queue_response(connection, UInt32(status), mhdResponse)
        if result == .NO {
            log("HTTPServer: libmicrohttpd refused to queue a \(status) response; closing the connection")
        }
        return result
    }

    private func add(_ header: (name: String, value: String), to response: OpaquePointer) {
        if MHD_add_response_header(response, header.name, header.value) == .NO {
            // libmicrohttpd rejects names or values containing CR, LF or other forbidden bytes.
            log("HTTPServer: dropped response header \"\(header.name)\": libmicrohttpd refused it")
        }
    }
}
