import Dispatch
import Foundation

/// Lets at most `limit` threads run a piece of work at once; the others sleep until a slot frees.
/// (History reads; activity lists have threads of their own, `Router.listThreads`, and ingest decoding serial queues, `IngestHandler.decodingQueues`.)
final class ConcurrencyLimit: Sendable {
    private let slots: DispatchSemaphore

    init(_ limit: Int) {
        slots = DispatchSemaphore(value: max(1, limit))
    }

    func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        slots.wait()
        defer { slots.signal() }
        return try body()
    }

    /// Runs `body` once a slot is free, or gives up (nil) after `seconds`.
    func run<T, E: Error>(waitingAtMost seconds: Double, _ body: () throws(E) -> T) throws(E) -> T? {
        guard slots.wait(timeout: .now() + seconds) == .success else { return nil }
        defer { slots.signal() }
        return try body()
    }

    /// History reads (an activity's or a booking's events, replayed): each holds every event it
    /// replays in memory, so only as many run at once as there are processors.
    static func historyReads() -> ConcurrencyLimit {
        ConcurrencyLimit(ProcessInfo.processInfo.activeProcessorCount)
    }
}
