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

    /// Like `immediate`, except that a wait of `held` seconds or more (a batch delay) is not
    /// recorded and lasts until the reporter cuts it short (`flush()`, `close`): so that a
    /// reporter with an immediate clock cannot send and retry before the test closes it.
    func immediate(holding held: TimeInterval) -> ActivityReporter.Sleep {
        { [self] seconds in
            if seconds >= held {
                try await Task.sleep(nanoseconds: 3_600 * 1_000_000_000)
            } else {
                delays.withLock { $0.append(seconds) }
            }
        }
    }

    var suspending: ActivityReporter.Sleep {
        { [self] seconds in
            delays.withLock { $0.append(seconds) }
            try await Task.sleep(nanoseconds: 3_600 * 1_000_000_000)
        }
    }
}
