import Foundation
import Synchronization

/// Where "now" comes from, so tests can move time (DESIGN.md section 4).
public struct Clock: Sendable {
    public let now: @Sendable () -> Double

    public init(now: @escaping @Sendable () -> Double) { self.now = now }

    public static let system = Clock { Date().timeIntervalSince1970 }

    /// A clock that stands still until moved.
    public static func manual(_ start: Double) -> (Clock, ManualTime) {
        let time = ManualTime(start)
        return (Clock { time.value }, time)
    }
}

/// The hand of a manual clock.
public final class ManualTime: Sendable {
    private let current: Mutex<Double>
    public init(_ start: Double) { current = Mutex(start) }
    public var value: Double { current.withLock { $0 } }
    public func set(_ t: Double) { current.withLock { $0 = t } }
    public func advance(by seconds: Double) { current.withLock { $0 += seconds } }
}
