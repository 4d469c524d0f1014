import Foundation

/// One HTTP request the reporter makes: `POST <server>/v1/events` with a batch.
public struct TransportRequest: Sendable, Hashable {
    public var url: URL
    public var method: String
    /// Header names as sent (`Content-Type`, `Authorization`, …).
    public var headers: [String: String]
    public var body: Data
    /// Seconds to wait for the answer before treating the attempt as failed.
    public var timeout: TimeInterval

    public init(url: URL, method: String = "POST", headers: [String: String] = [:], body: Data = Data(),
                timeout: TimeInterval = 10) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}
