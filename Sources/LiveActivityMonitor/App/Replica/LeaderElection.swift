import Dispatch
import Foundation
import Synchronization

/// One replica's part in the leader election over PostgreSQL (DESIGN.md section 9). A standby
/// tries the leader lock every second; the one that takes it raises the epoch and is `elected`
/// (which rebuilds state from the tables and starts the writer). A leader checks its lock
/// session every second; when the session is gone it is `lost` at once, and never leads again
/// (the process stops; `serve` exits non-zero for systemd to restart it as a standby).
final class LeaderElection: Sendable {
    /// Between a standby's tries, and between a leader's checks of its session.
    static let interval = 1.0

    private let lock: LockSlot
    private let elected: @Sendable (Int64) throws -> Void
    private let lost: @Sendable () -> Void
    private let log: @Sendable (String) -> Void
    /// A standby's failed tries, one a second while the database is away: a few a minute.
    private let retryLog: LogThrottle
    private let stopping = Atomic(false)
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let running = Atomic(false)

    init(uri: String, password: String?, log: @escaping @Sendable (String) -> Void,
         elected: @escaping @Sendable (Int64) throws -> Void, lost: @escaping @Sendable () -> Void) {
        lock = LockSlot(LeaderLock(uri: uri, password: password))
        self.elected = elected
        self.lost = lost
        self.log = log
        retryLog = LogThrottle(limit: 3, clock: .system, write: log)
    }

    /// One try to lead, on the caller's thread (before `start`): true when elected, false when
    /// another replica leads. Throws what went wrong otherwise (the database unreachable, the
    /// state not rebuilt), having let the lock go for another replica.
    func attempt() throws -> Bool {
        do {
            guard try lock.lock.tryTake() else { return false }
            let epoch = try lock.lock.raiseEpoch()
            log("leader: this replica took the leader lock (epoch \(epoch)); rebuilding state from the tables")
            try elected(epoch)
            log("leader: leading (epoch \(epoch)): taking events")
            return true
        } catch {
            lock.lock.release()
            throw error
        }
    }

    /// A standby's try: a failure is logged, and the next try comes a second later.
    private func retry() -> Bool {
        do {
            return try attempt()
        } catch {
            retryLog("leader election: \(PostgresEventStore.writeProblem(error)); trying again in \(Int(Self.interval)) s")
            return false
        }
    }

    /// Runs the election on a thread of its own, `leading` or as a standby, until `stop`.
    func start(leading: Bool) {
        running.store(true, ordering: .sequentiallyConsistent)
        if !leading { log("leader: standby (another replica leads); trying the leader lock every \(Int(Self.interval)) s") }
        Thread.start(named: "leader-election") { [self] in
            var leading = leading
            while wake.wait(timeout: .now() + Self.interval) == .timedOut, !stopping.load(ordering: .sequentiallyConsistent) {
                if !leading {
                    leading = retry()
                } else if !lock.lock.isAlive() {
                    lock.lock.release()
                    lost()
                    break
                }
            }
            stopped.signal()
        }
    }

    /// Stops the thread; the lock is kept until `release` (the store closes in between).
    func stop() {
        guard running.exchange(false, ordering: .sequentiallyConsistent) else { return }
        stopping.store(true, ordering: .sequentiallyConsistent)
        wake.signal()
        stopped.wait()
    }

    /// Ends the lock session (after `stop`), letting another replica lead.
    func release() {
        lock.lock.release()
    }
}

/// The lock session, handed between threads but used by one at a time: the starting thread's
/// `attempt`, then the election thread, then the stopping thread after `stop` waited for it.
private final class LockSlot: @unchecked Sendable {
    let lock: LeaderLock

    init(_ lock: LeaderLock) {
        self.lock = lock
    }
}
