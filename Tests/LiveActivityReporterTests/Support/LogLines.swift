import Synchronization

/// Collects the reporter's log lines.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    var all: [String] { lines.withLock { $0 } }

    var sink: @Sendable (String) -> Void {
        { [self] line in lines.withLock { $0.append(line) } }
    }
}
