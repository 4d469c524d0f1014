import Dispatch
import Foundation
import Synchronization

/// A value made on a thread of its own (named `name`) while the caller goes on; `wait()` returns
/// it once made. Start-up uses it to spread its work over the processors.
final class Background<T: Sendable>: Sendable {
    private let result = Mutex<T?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(named name: String, _ body: @escaping @Sendable () -> T) {
        Thread.start(named: name) { [self] in
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
    }

    /// The value, once made; call it once (the value is moved out, not copied).
    func wait() -> T {
        done.wait()
        return result.withLock { $0.take()! }
    }
}

/// Runs `bodies` at once: the first on the calling thread, each other in the `Background`
/// (threads named `name`); returns their results in order once all have finished.
func inParallel<T: Sendable>(named name: String, _ bodies: [@Sendable () -> T]) -> [T] {
    guard let first = bodies.first else { return [] }
    let others = bodies.dropFirst().map { Background(named: name, $0) }
    return [first()] + others.map { $0.wait() }
}
