import Synchronization

/// A value behind a `Mutex` that `@Sendable` closures (handlers, threads of a test) can share
/// with the test that reads it.
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    /// The value now (a copy).
    public var value: Value {
        mutex.withLock { $0 }
    }

    /// Runs `body` on the value under the lock.
    public func withLock<R>(_ body: (inout Value) -> R) -> R {
        mutex.withLock { body(&$0) }
    }
}
