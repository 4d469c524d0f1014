import Dispatch
import Foundation
import PostgresDB
import Synchronization

/// `--retention` over PostgreSQL: every `interval`, drops the day partitions of `events` whose
/// whole day is older than `age` (and the rows filed by those days), on a connection of its own.
/// Whole days only: an event is kept until the last event of its day is past the age, so up to
/// a day longer than over SQLite, which deletes event by event.
final class PostgresRetention: Sendable {
    private let uri: String
    private let password: String?
    private let age: Double
    private let interval: Double
    private let clock: Clock
    private let log: @Sendable (String) -> Void
    private let stopping = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let running = Mutex(false)

    init(uri: String, password: String?, age: Double, interval: Double, clock: Clock,
         log: @escaping @Sendable (String) -> Void) {
        self.uri = uri
        self.password = password
        self.age = age
        self.interval = interval
        self.clock = clock
        self.log = log
    }

    func start() {
        running.withLock { $0 = true }
        Thread.start(named: "store-retention") { [self] in
            repeat { pass() } while stopping.wait(timeout: .now() + interval) == .timedOut
            stopped.signal()
        }
    }

    func stop() {
        guard running.withLock({ r in defer { r = false }; return r }) else { return }
        stopping.signal()
        stopped.wait()
    }

    /// One pass; returns the days dropped (none when the database could not be reached: the
    /// next pass tries again).
    @discardableResult
    func pass() -> [Int64] {
        do {
            let db = try PostgresConnection(uri: uri, password: password)
            let days = try PostgresEventPartitions.drop(before: PostgresEventPartitions.day(clock.now() - age), db)
            if !days.isEmpty { log("retention: dropped \(days.count) day partition(s) of events older than \(Retention.describe(age))") }
            return days
        } catch {
            log("retention: \(PostgresEventStore.writeProblem(error)); trying again in \(Retention.describe(interval))")
            return []
        }
    }
}
