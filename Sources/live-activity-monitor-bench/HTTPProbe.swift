import HTTPServer

/// Timed requests from one keep-alive connection: what one client (Prometheus, the dashboard)
/// sees, one request at a time.
enum HTTPProbe {
    /// The status of one GET, or nil when nothing answered.
    static func status(port: Int, path: String) -> Int? {
        let client = HTTPClient(port: port, timeoutSeconds: 5)
        defer { client.close() }
        return try? client.request("GET", path).status
    }

    /// Median seconds of `count` GETs (after one untimed warm-up), each checked for a 200.
    /// `path(i)` may vary the request (e.g. a different booking each time).
    static func medianSeconds(port: Int, count: Int, path: (Int) -> String) throws -> (median: Double, bytes: Int) {
        let client = HTTPClient(port: port, timeoutSeconds: 60)
        defer { client.close() }
        _ = try get(client, path(count))
        var times: [Double] = []
        var bytes = 0
        for i in 0..<count {
            let (seconds, body) = try Stopwatch.time { try get(client, path(i)) }
            times.append(seconds)
            bytes = body
        }
        return (Stats.median(times), bytes)
    }

    fileprivate static func get(_ client: HTTPClient, _ path: String) throws -> Int {
        let response = try client.request("GET", path)
        guard response.status == 200 else {
            throw BenchError("GET \(path) answered \(response.status): \(response.text.prefix(200))")
        }
        return response.body.count
    }
}

extension HTTPProbe {
    /// The body of one GET that must answer 200.
    static func text(port: Int, path: String) throws -> String {
        let client = HTTPClient(port: port, timeoutSeconds: 60)
        defer { client.close() }
        let response = try client.request("GET", path)
        guard response.status == 200 else { throw BenchError("GET \(path) answered \(response.status)") }
        return response.text
    }
}

extension HTTPProbe {
    /// Median seconds of `count` GETs of `path` on each of two servers, request by request in
    /// turn, so that both see the same moments of a busy machine.
    static func alternatingMedians(ports: (Int, Int), count: Int, path: String) throws -> (Double, Double) {
        let clients = (HTTPClient(port: ports.0, timeoutSeconds: 60), HTTPClient(port: ports.1, timeoutSeconds: 60))
        defer { clients.0.close(); clients.1.close() }
        _ = try get(clients.0, path)
        _ = try get(clients.1, path)
        let pair = [clients.0, clients.1]
        var times: [[Double]] = [[], []]
        // In turn, and in turn which goes first (A B, B A, …): whatever the second of two
        // back-to-back requests pays or saves falls on both alike.
        for i in 0..<count {
            for k in i % 2 == 0 ? [0, 1] : [1, 0] {
                times[k].append(try Stopwatch.time { try get(pair[k], path) }.seconds)
            }
        }
        return (Stats.median(times[0]), Stats.median(times[1]))
    }
}
