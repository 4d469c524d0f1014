import Synchronization
import SQLiteDB

/// Read-only connections for the HTTP threads. WAL lets them read while the writer commits.
final class ReaderPool: Sendable {
    private let path: String
    /// Idle connections, and whether the pool is closed (then none are kept).
    private let idle = Mutex<(boxes: [ConnectionBox], closed: Bool)>(([], false))
    private static let maxIdle = 8

    init(path: String) { self.path = path }

    /// Runs `body` with a connection no other thread is using.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        let box = try idle.withLock { $0.boxes.popLast() } ?? ConnectionBox(Database(path: path, mode: .readOnly))
        defer {
            idle.withLock { if !$0.closed, $0.boxes.count < Self.maxIdle { $0.boxes.append(box) } }
        }
        return try body(box.database)
    }

    /// Closes the idle connections now, and each borrowed one as it comes back, so that the
    /// database's files are let go when the store closes, not whenever it is released.
    func close() {
        idle.withLock {
            $0.closed = true
            $0.boxes = []
        }
    }
}

/// Carries a connection between threads.
/// `@unchecked Sendable`: a `Database` is used by one thread at a time, and the pool hands each
/// box to exactly one borrower (or the writer thread owns it alone).
final class ConnectionBox: @unchecked Sendable {
    let database: Database
    init(_ database: Database) { self.database = database }
}

/// A thread's own connection until that thread lets it go: set to nil, it closes at once, not
/// whenever the thread's closure is released (a closed store lets go of its files).
/// `@unchecked Sendable`: handed to one thread, which alone uses it.
final class ConnectionSlot: @unchecked Sendable {
    var database: Database?
    init(_ database: Database) { self.database = database }
}
