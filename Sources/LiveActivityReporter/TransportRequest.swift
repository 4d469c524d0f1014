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

/// A transport that logs its requests shows them without the ingest token (`Authorization`).
extension TransportRequest: CustomReflectable {
    public var customMirror: Mirror {
        var shown = headers
        for name in headers.keys where name.lowercased() == "authorization" { shown[name] = "redacted" }
        return Mirror(self, children: ["url": url, "method": method, "headers": shown, "body": body, "timeout": timeout],
                      displayStyle: .struct)
    }
}
