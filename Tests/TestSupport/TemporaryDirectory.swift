import Foundation

/// A fresh directory under the system's temporary directory, and its removal.
public enum TemporaryDirectory {
    /// Creates one (`lam-test-<UUID>`) and returns its path.
    public static func make(prefix: String = "lam-test-") throws -> String {
        let path = NSTemporaryDirectory() + prefix + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Removes `path` and everything in it; a path already gone is removed.
    ///
    /// Retries for a while: the last SQLite connection to close deletes the `-wal` and `-shm`
    /// files, sometimes while `removeItem` walks the directory, which then fails on a file
    /// already gone. A directory still there after that is an error, never a silent leftover.
    public static func remove(_ path: String) throws {
        var failure: (any Error)?
        for _ in 0..<50 {
            do {
                try FileManager.default.removeItem(atPath: path)
                return
            } catch {
                if !FileManager.default.fileExists(atPath: path) { return }
                failure = error
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        throw TestFailure("could not remove \(path): \(failure.map { String(describing: $0) } ?? "")")
    }
}
