import Dispatch

/// Opens once and stays open: every `wait()`, before or after `open()`, from any number of
/// threads, returns once it is open. What makes `stop()` and `close()` safe to call twice, or
/// from two threads at once: each caller returns only once the thing has stopped.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func open() { semaphore.signal() }

    func wait() {
        semaphore.wait()
        semaphore.signal()  // for the next waiter
    }
}
