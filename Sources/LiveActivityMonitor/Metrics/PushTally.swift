import LiveActivityWire
import Prometheus

/// The push families of one commit (`push_requests_total`, `push_latency_seconds`,
/// `push_payload_bytes`), summed under small keys and added to the counters once per commit:
/// building and hashing three series keys for every push event was a measurable share of the writer's
/// instructions (callgrind). A commit meets a handful of series, so each is found by a scan of a
/// short array: hashing the three keys of every push into dictionaries was the next share.
struct PushTally: Sendable {
    private typealias M = MonitorMetrics

    private struct Requests: Equatable {
        var kind: PushKind
        var priority: Int
        var reason: String
        var status: Int
    }

    private struct Latency: Equatable {
        var kind: PushKind
        var priority: Int
    }

    private var requests: [(series: Requests, count: Double)] = []
    private var latency: [(series: Latency, histogram: HistogramValue)] = []
    private var payload: [(kind: PushKind, histogram: HistogramValue)] = []

    mutating func count(_ push: PushResult) {
        let reason = push.accepted ? "none" : M.reasonLabel(push.reason)
        let series = Requests(kind: push.kind, priority: push.priority, reason: reason, status: push.status)
        if let i = requests.firstIndex(where: { $0.series == series }) { requests[i].count += 1 } else { requests.append((series, 1)) }
        let at = Latency(kind: push.kind, priority: push.priority)
        let l = latency.firstIndex { $0.series == at } ?? {
            latency.append((at, HistogramValue(upperBounds: M.pushLatency.buckets)))
            return latency.count - 1
        }()
        latency[l].histogram.observe(push.latencyMs / 1000)
        if let bytes = push.payloadBytes {
            let p = payload.firstIndex { $0.kind == push.kind } ?? {
                payload.append((push.kind, HistogramValue(upperBounds: M.pushPayload.buckets)))
                return payload.count - 1
            }()
            payload[p].histogram.observe(Double(bytes))
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
