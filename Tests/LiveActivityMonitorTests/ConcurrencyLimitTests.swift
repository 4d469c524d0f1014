import Foundation
import Synchronization
import Testing
@testable import LiveActivityMonitor

@Suite struct ConcurrencyLimitTests {
    /// Eight threads through a limit of two: never more than two inside, and all get through.
    @Test func neverMoreThanTheLimitInside() {
        let limit = ConcurrencyLimit(2)
        let counts = Mutex((inside: 0, most: 0, done: 0))
        let group = DispatchGroup()
        for _ in 0..<8 {
            group.enter()
            Thread {
                limit.run {
                    counts.withLock { $0.inside += 1; $0.most = max($0.most, $0.inside) }
                    usleep(20_000)
                    counts.withLock { $0.inside -= 1; $0.done += 1 }
                }
                group.leave()
            }.start()
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        let final = counts.withLock { $0 }
        #expect(final.most == 2)
        #expect(final.done == 8)
    }

    @Test func aLimitBelowOneStillLetsOneThrough() {
        #expect(ConcurrencyLimit(0).run { 42 } == 42)
    }
}
