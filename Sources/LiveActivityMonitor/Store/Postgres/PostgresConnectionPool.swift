import PostgresDB
import Synchronization

/// Read connections to the PostgreSQL store for the HTTP threads, opened when needed and kept
/// idle up to a few: reads run alongside each other and the writer. A connection that lost its
/// server is not kept; the next read opens a new one.
final class PostgresConnectionPool: Sendable {
    private let idle = Mutex<(boxes: [PostgresConnectionBox], closed: Bool)>(([], false))
    private let open: @Sendable () throws -> PostgresConnection
    private let maxIdle: Int

    init(maxIdle: Int, open: @escaping @Sendable () throws -> PostgresConnection) {
        self.maxIdle = maxIdle
        self.open = open
    }

    /// Runs `body` with a connection no other thread is using. A read on an idle connection
    /// the server closed meanwhile runs again on a new one (reads change nothing).
    func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        if let box = idle.withLock({ $0.boxes.popLast() }) {
            do {
                return try read(on: box, body)
            } catch let error as PostgresError where error.isConnectionFailure && !box.connection.isConnected {}
        }
        return try read(on: PostgresConnectionBox(open()), body)
    }

    private func read<T>(on box: PostgresConnectionBox, _ body: (PostgresConnection) throws -> T) throws -> T {
        defer {
            if box.connection.isConnected {
                idle.withLock { if !$0.closed, $0.boxes.count < maxIdle { $0.boxes.append(box) } }
            }
        }
        return try body(box.connection)
    }

    /// Closes the idle connections now, and each borrowed one as it comes back.
    func close() {
        idle.withLock {
            $0.closed = true
            $0.boxes = []
        }
    }
}

/// Carries a connection between threads. `@unchecked Sendable`: the pool hands each box to
/// exactly one borrower at a time.
final class PostgresConnectionBox: @unchecked Sendable {
    let connection: PostgresConnection
    init(_ connection: PostgresConnection) { self.connection = connection }
}
