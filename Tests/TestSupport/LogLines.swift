import Synchronization

/// Lines logged from any thread (a server's `MonitorConfiguration.log`, a reporter's log), for
/// the test to read.
public final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    public func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// Every line so far, in order.
    public var value: [String] { lines.withLock { $0 } }

    /// A log function that appends here.
    public var sink: @Sendable (String) -> Void {
        { [self] line in append(line) }
    }
}
