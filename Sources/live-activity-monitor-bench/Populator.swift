import Foundation
import HTTPServer
import Synchronization

/// Loads events through the real ingest path: NDJSON requests of up to 1000 events (the
/// server's per-request limit) from a few concurrent keep-alive connections.
struct Populator {
    let port: Int
    var workers = 4

    /// Posts `batches` requests, batch `j` holding `lines(j)`; returns events per second.
    /// Every request must be answered 200 with every event accepted (none a duplicate).
    @discardableResult
    func post(batches: Int, lines: @escaping @Sendable (Int) -> [String]) throws -> Double {
        let progress = Progress()
        let group = DispatchGroup()
        let start = Stopwatch.now()
        for _ in 0..<workers {
            group.enter()
            let thread = Thread { [port, progress] in
                defer { group.leave() }
                let client = HTTPClient(port: port, timeoutSeconds: 120)
                defer { client.close() }
                while progress.failure.withLock({ $0 == nil }) {
                    let j = progress.next.add(1, ordering: .relaxed).oldValue
                    guard j < batches else { return }
                    let batch = lines(j)
                    let body = Array(batch.joined(separator: "\n").utf8)
                    do {
                        let response = try client.request("POST", "/v1/events",
                                                          headers: [("Content-Type", "application/x-ndjson")], body: body)
                        let expected = "{\"accepted\":\(batch.count),\"duplicates\":0}"
                        guard response.status == 200, response.text == expected else {
                            progress.failure.withLock { $0 = "batch \(j): \(response.status) \(response.text.prefix(300))" }
                            return
                        }
                        progress.events.add(batch.count, ordering: .relaxed)
                    } catch {
                        progress.failure.withLock { $0 = "batch \(j): \(error)" }
                    }
                }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        if let message = progress.failure.withLock({ $0 }) { throw BenchError("ingest failed: \(message)") }
        return Double(progress.events.load(ordering: .relaxed)) / (Stopwatch.now() - start)
    }

    /// Shared by the worker threads.
    final class Progress: Sendable {
        let next = Atomic(0)
        let events = Atomic(0)
        let failure = Mutex<String?>(nil)
    }
}
