import Foundation
import Glibc
import Synchronization
import Testing
@testable import LiveActivityMonitor

@Suite struct NicedThreadsTests {
    /// Eight jobs on two threads: never more than two at once, all run, each at the nice value
    /// asked for, and a job that waited past `maxWait` is told so.
    @Test func runsQueuedWorkOnAFewNicedThreads() {
        let threads = NicedThreads(named: "test-niced", count: 2, nice: 7, maxWait: 0.15)
        let seen = Mutex((inside: 0, most: 0, nices: Set<Int32>(), late: 0, done: 0))
        let group = DispatchGroup()
        for _ in 0..<8 {
            group.enter()
            threads.run { inTime in
                errno = 0
                let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
                seen.withLock { $0.inside += 1; $0.most = max($0.most, $0.inside); $0.nices.insert(nice) }
                usleep(100_000)
                seen.withLock { $0.inside -= 1; $0.done += 1; if !inTime { $0.late += 1 } }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        let final = seen.withLock { $0 }
        #expect(final.most == 2)
        #expect(final.done == 8)
        #expect(final.nices == [7])
        // Jobs 5-8 waited at least 0.2 s for a thread (two rounds of two 0.1 s jobs before them).
        #expect(final.late >= 4)
    }

    @Test func normalPriorityRunsTheWorkElsewhereAndWaits() {
        var touched = 0
        let caller = pthread_self()
        let (value, ranOn) = NormalPriority.run { () -> (Int, pthread_t) in
            touched += 1
            return (42, pthread_self())
        }
        #expect(value == 42)
        #expect(touched == 1)
        #expect(pthread_equal(ranOn, caller) == 0)
    }
}
