import Foundation
import Synchronization
import LiveActivityReporter

/// An injected clock for the reporter: records every wait it is asked for. `immediate` returns
/// at once (time flies); `suspending` waits until the reporter cancels the wait (`flush()`).
final class SleepRecorder: Sendable {
    private let delays = Mutex<[TimeInterval]>([])

    var recorded: [TimeInterval] { delays.withLock { $0 } }

    var immediate: ActivityReporter.Sleep {
        { [self] seconds in delays.withLock { $0.append(seconds) } }
    }

    var suspending: ActivityReporter.Sleep {
        { [self] seconds in
            delays.withLock { $0.append(seconds) }
            try await Task.sleep(nanoseconds: 3_600 * 1_000_000_000)
        }
    }
}
