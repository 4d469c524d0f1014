import Dispatch
import Foundation
import Glibc
import Synchronization

/// A few threads at a low CPU priority (a nice value), made once, that run work queued from other
/// threads in the order it came: on busy processors that work gets what the others leave.
///
/// Made once, not a thread per piece of work: starting and ending a thread takes glibc's lock on
/// its cache of thread stacks, which every thread start in the process also takes (a polling
/// thread starting the next one waited tens of milliseconds behind a niced thread preempted while
/// it ended). Nice is set per thread on Linux and cannot be raised back, so these threads do
/// nothing else. They take a lock other threads need only with `Mutex.withLockWhenFree`.
final class NicedThreads: Sendable {
    private struct Job {
        /// When it was queued (uptime nanoseconds).
        let queued: UInt64
        let work: @Sendable (_ inTime: Bool) -> Void
    }

    private let jobs = Mutex<[Job]>([])
    private let queued = DispatchSemaphore(value: 0)
    /// How long a job may wait for a thread before it is told it came too late.
    let maxWait: Double

    /// Starts `count` threads (at least one) named `name`, each at `nice`.
    init(named name: String, count: Int, nice: Int32, maxWait: Double) {
        self.maxWait = maxWait
        for _ in 0..<max(1, count) {
            Thread.start(named: name) { [self] in
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice)
                runJobs()
            }
        }
    }

    /// Queues `work`; a thread runs it with `inTime` true, or false if the job waited more than
    /// `maxWait` for one (then it should only say so: the others are busy).
    func run(_ work: @escaping @Sendable (_ inTime: Bool) -> Void) {
        jobs.withLock { $0.append(Job(queued: DispatchTime.now().uptimeNanoseconds, work: work)) }
        queued.signal()
    }

    private func runJobs() -> Never {
        while true {
            queued.wait()
            guard let job = jobs.withLockWhenFree({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            let waited = Double(DispatchTime.now().uptimeNanoseconds - job.queued) / 1e9
            job.work(waited <= maxWait)
        }
    }
}
