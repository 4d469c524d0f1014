import Foundation

extension Thread {
    /// Starts `body` on a new thread named `name` (at most 15 bytes: Linux refuses longer), as
    /// `top -H`, `perf` and /proc show it. The thread names itself through
    /// `/proc/thread-self/comm` (what `pthread_setname_np` does, which Swift's Glibc module does
    /// not export): `Thread.name` set from inside the thread raced with Foundation's own start
    /// of it, and a writer thread sometimes kept the process's name.
    static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            let fd = open("/proc/thread-self/comm", O_WRONLY)
            if fd >= 0 {
                _ = name.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
                close(fd)
            }
            body()
        }
        thread.start()
    }
}
