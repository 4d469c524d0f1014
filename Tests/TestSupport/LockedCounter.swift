import Synchronization

/// A count that threads of a test add to.
public final class LockedCounter: Sendable {
    private let count = Mutex(0)

    public init() {}

    public func add(_ n: Int) { count.withLock { $0 += n } }

    public var value: Int { count.withLock { $0 } }
}
