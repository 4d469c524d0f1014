import Foundation
import Synchronization

/// Where "now" comes from, so tests can move time (DESIGN.md section 4).
public struct Clock: Sendable {
    public let now: @Sendable () -> Double
    /// For a clock that jumps (a manual one): registers what to run, on the mover's thread,
    /// each time it is moved. A store uses it to let time's transitions happen at once, as its
    /// writer's timer does for the system clock.
    let onMove: (@Sendable (@escaping @Sendable () -> Void) -> Void)?

    public init(now: @escaping @Sendable () -> Double) {
        self.now = now
        onMove = nil
    }

    init(now: @escaping @Sendable () -> Double, onMove: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        self.now = now
        self.onMove = onMove
    }

    public static let system = Clock { Date().timeIntervalSince1970 }

    /// A clock that stands still until moved.
    public static func manual(_ start: Double) -> (Clock, ManualTime) {
        let time = ManualTime(start)
        return (Clock(now: { time.value }, onMove: { time.whenMoved($0) }), time)
    }
}

/// The hand of a manual clock. Moving it runs, before it returns, what was registered to run
/// on a move (a store's sweep), so that a test that moves time sees what time did.
public final class ManualTime: Sendable {
    private let current: Mutex<Double>
    private let observers = Mutex<[@Sendable () -> Void]>([])
    public init(_ start: Double) { current = Mutex(start) }
    public var value: Double { current.withLock { $0 } }

    public func set(_ t: Double) {
        current.withLock { $0 = t }
        moved()
    }

    public func advance(by seconds: Double) {
        current.withLock { $0 += seconds }
        moved()
    }

    func whenMoved(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }

    private func moved() {
        for observer in observers.withLock({ $0 }) { observer() }
    }
}
