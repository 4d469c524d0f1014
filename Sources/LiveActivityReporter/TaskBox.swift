import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hands a `URLSessionDataTask` to a cancellation handler that may run before, during or after
/// it is created.
///
/// `@unchecked Sendable`: every access to the two fields happens under `lock` (not `Mutex`,
/// which needs macOS 15 / iOS 18).
final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func set(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelNow = cancelled
        lock.unlock()
        if cancelNow { task.cancel() }
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}
