import Glibc
import Synchronization

/// An exclusive `flock` on the database file for the life of a store, and the file's identity.
///
/// Each store keeps its counters and live activities in memory and writes them back, so a second
/// `serve` or an `import` on the same file would overwrite the first one's counts (SQLite alone
/// would let both write). And a file deleted or replaced under a running store would take the
/// events it acknowledges with it: the identity check lets the writer refuse them instead.
final class DatabaseFileLock: Sendable {
    struct InUse: Error, CustomStringConvertible {
        let path: String
        var description: String {
            "\(path) is in use by another live-activity-monitor process (serve or import); stop it first: "
                + "two writers would overwrite each other's counters"
        }
    }

    let path: String
    private let descriptor: Mutex<Int32>
    private let device: UInt64
    private let inode: UInt64

    /// Locks the file at `path`, which must exist (open the database first).
    init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(path: path, call: "open", code: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { throw InUse(path: path) }
            throw Failure(path: path, call: "flock", code: code)
        }
        var info = stat()
        fstat(fd, &info)
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        descriptor = Mutex(fd)
    }

    /// Why `path` no longer names the file this store writes, or nil (one `stat`).
    func fileProblem() -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            guard errno == ENOENT else { return nil }
            return "the database file \(path) was deleted while the server ran; writes are refused: restart the server"
        }
        guard UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode else {
            return "the database file \(path) was replaced while the server ran; writes are refused: restart the server to use the new file"
        }
        return nil
    }

    /// Lets another process open the file; idempotent.
    func release() {
        descriptor.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    deinit { release() }

    struct Failure: Error, CustomStringConvertible {
        let path: String, call: String, code: Int32
        var description: String { "cannot lock \(path) (\(call): \(String(cString: strerror(code))))" }
    }
}
