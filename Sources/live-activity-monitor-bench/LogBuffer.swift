import Synchronization

/// What a child process has written so far, appended from the pipe's reader thread.
final class LogBuffer: Sendable {
    private let text = Mutex("")
    func append(_ s: String) { text.withLock { $0 += s } }
    var contents: String { text.withLock { $0 } }
}
