import Dispatch
import Foundation

/// Lets at most `limit` threads run a piece of work at once; the others sleep until a slot frees.
///
/// libmicrohttpd runs a thread per connection. Without a bound, 64 clients posting batches keep
/// 64 threads decoding at once, and the scheduler gives the one store writer, which every one
/// of them waits for, a 1/65 share of the CPU.
final class ConcurrencyLimit: Sendable {
    private let slots: DispatchSemaphore

    init(_ limit: Int) {
        slots = DispatchSemaphore(value: max(1, limit))
    }

    /// Leaves one processor to the store writer.
    static func decoding() -> ConcurrencyLimit {
        ConcurrencyLimit(ProcessInfo.processInfo.activeProcessorCount - 1)
    }

    func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        slots.wait()
        defer { slots.signal() }
        return try body()
    }
}
