import CMicroHTTPD
import Dispatch
import Glibc
import Synchronization

/// Closes connections that are too slow to send a request or to take a response.
///
/// libmicrohttpd's connection timeout is an idle timeout: every byte received resets it, so a
/// client trickling a byte a second (slowloris) would hold its connection, and in
/// thread-per-connection mode its thread, forever. The watchdog gives every stage a deadline
/// instead: a connection has `limitSeconds` from when it opens, or its previous response has
/// been sent, to deliver a whole request (headers and body), and again from when a response
/// is queued until it is sent. A handler that is running is never timed out.
///
/// A connection past its deadline has its socket shut down, which its libmicrohttpd thread
/// sees as the peer closing. That is safe from another thread because libmicrohttpd reports
/// a connection closed (``closed(_:)``, under the same lock as the scan) before it closes its
/// socket, so the descriptor shut down can never be one that was reused.
final class ConnectionWatchdog: Sendable {
    /// One open connection (kept in its `WorkerThread.Connection`, the socket context).
    final class Watched: Sendable {
        let fd: Int32
        /// Monotonic nanoseconds by which the current stage must be done; 0 while the handler runs.
        let deadline: Atomic<Int64>

        init(fd: Int32, deadline: Int64) {
            self.fd = fd
            self.deadline = Atomic(deadline)
        }
    }

    let limitNanoseconds: Int64
    private let open = Mutex<[ObjectIdentifier: Watched]>([:])
    private let timer = Mutex<DispatchSourceTimer?>(nil)
    private let log: @Sendable (String) -> Void

    init(limitSeconds: Int, log: @escaping @Sendable (String) -> Void) {
        limitNanoseconds = Int64(limitSeconds) * 1_000_000_000
        self.log = log
    }

    /// Starts scanning, four times per limit (at most once a second, at least every 50 ms).
    func start() {
        let period = min(1.0, max(0.05, Double(limitNanoseconds) / 4e9))
        timer.withLock { timer in
            let source = DispatchSource.makeTimerSource(queue: .global())
            source.schedule(deadline: .now() + period, repeating: period, leeway: .milliseconds(10))
            source.setEventHandler { [self] in scan() }
            source.resume()
            timer = source
        }
    }

    func stop() {
        timer.withLock { source in
            source?.cancel()
            source = nil
        }
    }

    /// A connection opened: what to keep for it.
    func opened(_ connection: OpaquePointer) -> Watched {
        let watched = Watched(fd: CMicroHTTPD_connection_fd(connection), deadline: Self.now() + limitNanoseconds)
        open.withLock { $0[ObjectIdentifier(watched)] = watched }
        return watched
    }

    /// A connection closed: forget it.
    func closed(_ watched: Watched) {
        _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(watched)) }
    }

    /// The handler is about to run: no deadline until it returns.
    func handling(_ connection: OpaquePointer) {
        WorkerThread.Connection.of(connection)?.watched?.deadline.store(0, ordering: .relaxed)
    }

    /// A response was queued, or a request completed (the next one is due): the clock restarts.
    func restart(_ connection: OpaquePointer) {
        WorkerThread.Connection.of(connection)?.watched?.deadline.store(Self.now() + limitNanoseconds, ordering: .relaxed)
    }

    private func scan() {
        let now = Self.now()
        var overdue = 0
        open.withLock { connections in
            for watched in connections.values {
                let deadline = watched.deadline.load(ordering: .relaxed)
                guard deadline != 0, deadline < now else { continue }
                // Once: libmicrohttpd closes the connection as soon as its thread sees the shutdown.
                watched.deadline.store(0, ordering: .relaxed)
                shutdown(watched.fd, Int32(SHUT_RDWR))
                overdue += 1
            }
        }
        if overdue > 0 {
            log("HTTPServer: closed \(overdue) connection(s) that took more than "
                + "\(limitNanoseconds / 1_000_000_000) s to send a request or take a response")
        }
    }

    /// Monotonic nanoseconds, to the kernel's tick (a few milliseconds): deadlines are whole
    /// seconds, and every request restarts its connection's clock twice, where a read of the
    /// precise clock cost more than the rest of the watchdog's work.
    static func now() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &t)
        return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
    }
}
