import Foundation
import Synchronization
import LiveActivityReporter

/// The real `URLSessionTransport`, with a script of what to do with each attempt and a log of
/// what happened: lets a test drop a connection after the server answered, fail before
/// sending, or send to another server, while the requests themselves stay real HTTP.
final class RecordingTransport: ReporterTransport {
    enum Step: Sendable {
        /// Send for real and return the answer.
        case pass
        /// Send for real, then throw as if the connection dropped before the answer arrived.
        case dropAfterSending
        /// Throw a timeout without sending.
        case timeOut
        /// Send for real to another server (same path).
        case redirect(to: URL)
    }

    struct Attempt: Sendable {
        var eventIDs: [String]
        var body: Data
        /// nil when the attempt threw.
        var status: Int?
    }

    private let inner = URLSessionTransport()
    private let state: Mutex<(script: [Step], fallback: Step, attempts: [Attempt])>

    /// `script` applies to the first attempts in order; `then` to every later one.
    init(_ script: [Step] = [], then fallback: Step = .pass) {
        state = Mutex((script, fallback, []))
    }

    var attempts: [Attempt] { state.withLock { $0.attempts } }

    /// Replaces what later attempts do.
    func setFallback(_ step: Step) { state.withLock { $0.fallback = step } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let step = state.withLock { s in s.script.isEmpty ? s.fallback : s.script.removeFirst() }
        var attempt = Attempt(eventIDs: Self.ids(in: request.body), body: request.body, status: nil)
        defer { state.withLock { $0.attempts.append(attempt) } }
        switch step {
        case .pass:
            let response = try await inner.send(request)
            attempt.status = response.status
            return response
        case .dropAfterSending:
            let response = try await inner.send(request)
            attempt.status = response.status
            throw URLError(.networkConnectionLost)
        case .timeOut:
            throw URLError(.timedOut)
        case .redirect(let base):
            var moved = request
            moved.url = base.appendingPathComponent("v1").appendingPathComponent("events")
            let response = try await inner.send(moved)
            attempt.status = response.status
            return response
        }
    }

    static func ids(in body: Data) -> [String] {
        guard case .array(let events)? = try? JSONDecoder().decode(JSONContent.self, from: body) else { return [] }
        return events.compactMap { $0.objectValue?["id"]?.stringValue }
    }
}
