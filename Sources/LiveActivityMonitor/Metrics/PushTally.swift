import LiveActivityWire
import Prometheus

/// The push families of one commit (`push_requests_total`, `push_latency_seconds`,
/// `push_payload_bytes`), summed under small keys and added to the counters once per commit:
/// building and hashing three series keys for every push event was a measurable share of the writer's
/// instructions (callgrind).
struct PushTally: Sendable {
    private typealias M = MonitorMetrics

    private struct Requests: Hashable {
        var kind: PushKind
        var priority: Int
        var reason: String
        var status: Int
    }

    private struct Latency: Hashable {
        var kind: PushKind
        var priority: Int
    }

    private var requests: [Requests: Double] = [:]
    private var latency: [Latency: HistogramValue] = [:]
    private var payload: [PushKind: HistogramValue] = [:]

    mutating func count(_ push: PushResult) {
        let reason = push.accepted ? "none" : M.reasonLabel(push.reason)
        requests[Requests(kind: push.kind, priority: push.priority, reason: reason, status: push.status), default: 0] += 1
        latency[Latency(kind: push.kind, priority: push.priority), default: HistogramValue(upperBounds: M.pushLatency.buckets)]
            .observe(push.latencyMs / 1000)
        if let bytes = push.payloadBytes {
            payload[push.kind, default: HistogramValue(upperBounds: M.pushPayload.buckets)].observe(Double(bytes))
        }
    }

    /// Adds what was counted to `counters`, under the families' labels.
    func add(to counters: inout MonitorCounters) {
        for (series, count) in requests {
            counters.inc(M.pushRequests, series.kind.rawValue, String(series.priority), series.reason,
                         M.statusLabel(series.status), by: count)
        }
        for (series, histogram) in latency {
            counters.merge(M.pushLatency, series.kind.rawValue, String(series.priority), histogram: histogram)
        }
        for (kind, histogram) in payload {
            counters.merge(M.pushPayload, kind.rawValue, histogram: histogram)
        }
    }
}
