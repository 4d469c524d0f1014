import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default transport: `URLSession`, on Linux and Apple platforms alike.
@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
public struct URLSessionTransport: ReporterTransport {
    public let session: URLSession

    /// An ephemeral session of its own (no cookies or cache, and other traffic of the app does not
    /// queue behind it) that gives up on an answer after `requestTimeout` seconds.
    ///
    /// The timeout is set on the session, not only on each request: swift-corelibs-foundation
    /// (Linux) ignores `URLRequest.timeoutInterval` and applies the session's
    /// `timeoutIntervalForRequest` (60 s by default), so a monitor that accepted the connection
    /// and never answered held every attempt for a minute.
    public init(requestTimeout: TimeInterval = 10) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = requestTimeout
        // The request timeout bounds each silence; this bounds a whole attempt whose answer
        // trickles in (the default is 7 days), with room for a 512 KiB batch on a slow link.
        configuration.timeoutIntervalForResource = max(requestTimeout * 6, 60)
        session = URLSession(configuration: configuration)
    }

    /// A session of your own. On Linux its configuration's `timeoutIntervalForRequest` is the
    /// only timeout that applies (the request's is ignored): set it to the reporter's
    /// `requestTimeout`.
    public init(session: URLSession) {
        self.session = session
    }

    /// Error when a response is not HTTP (it always is for http and https URLs).
    public struct NotHTTP: Error {}

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var urlRequest = URLRequest(url: request.url, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let box = TaskBox()
        // The completion-handler API, not `data(for:)`: that needs macOS 12 / iOS 15.
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<TransportResponse, any Error>) in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let http = response as? HTTPURLResponse {
                        var headers: [String: String] = [:]
                        for (name, value) in http.allHeaderFields {
                            if let name = name as? String, let value = value as? String { headers[name] = value }
                        }
                        continuation.resume(returning: TransportResponse(status: http.statusCode, headers: headers,
                                                                         body: data ?? Data()))
                    } else {
                        continuation.resume(throwing: NotHTTP())
                    }
                }
                box.set(task)
                task.resume()
            }
        } onCancel: {
            box.cancel()
        }
    }
}
