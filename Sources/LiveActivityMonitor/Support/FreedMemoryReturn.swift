import Dispatch
import Foundation
import Glibc

/// Gives freed memory's pages back to the system every few seconds (glibc's `malloc_trim`).
/// The writer lets go of each record's texts and known contents once its row is committed, and
/// indexes and queues let go of their old buffers as they grow; glibc keeps such pages in its
/// arenas and returns only an arena's top on its own. At a million live activities that kept
/// about 30 MB resident that nothing used (Tests/bench/PERFORMANCE.md, session 22). A pass
/// locks one arena at a time while it walks that arena's free chunks. `serve` runs one.
final class FreedMemoryReturn: Sendable {
    static let interval: DispatchTimeInterval = .seconds(10)

    private let stopRequested = DispatchSemaphore(value: 0)
    private let stopped = Gate()

    init() {
        Thread.start(named: "memory-return") { [self] in run() }
    }

    /// Stops the thread once its current pass is done. Idempotent: a later caller returns once
    /// stopped too.
    func stop() {
        stopRequested.signal()
        stopped.wait()
    }

    private func run() {
        while stopRequested.wait(timeout: .now() + Self.interval) == .timedOut { Self.returnFreedPages() }
        stopped.open()
    }

    /// One pass now: whether any memory went back. Never on a C library without `malloc_trim`
    /// (Swift's Glibc module does not declare it: looked up by name).
    @discardableResult
    static func returnFreedPages() -> Bool {
        trim.map { $0(0) == 1 } ?? false
    }

    private typealias Trim = @convention(c) (Int) -> Int32
    private static let trim: Trim? = dlsym(nil, "malloc_trim").map { unsafeBitCast($0, to: Trim.self) }  // nil: RTLD_DEFAULT
}
