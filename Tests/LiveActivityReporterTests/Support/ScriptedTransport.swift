import Foundation
import Synchronization
import LiveActivityReporter

/// Answers from a script, without a network: for answers the real monitor never gives
/// (429 from a proxy in front of it, 408 from a load balancer).
final class ScriptedTransport: ReporterTransport {
    private let state: Mutex<(answers: [TransportResponse], requests: [TransportRequest])>
    private let fallback: TransportResponse

    /// `answers` go to the first requests in order; `then` to every later one.
    init(_ answers: [TransportResponse], then fallback: TransportResponse = TransportResponse(status: 200)) {
        state = Mutex((answers, []))
        self.fallback = fallback
    }

    var requests: [TransportRequest] { state.withLock { $0.requests } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        state.withLock { s in
            s.requests.append(request)
            return s.answers.isEmpty ? fallback : s.answers.removeFirst()
        }
    }
}
