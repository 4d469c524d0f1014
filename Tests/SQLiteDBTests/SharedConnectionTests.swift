import Foundation
import Synchronization
import Testing
import SQLiteDB

@Suite struct SharedConnectionTests {
    /// One connection shared by threads, the way a caller is meant to: behind a `Mutex`.
    final class Shared: Sendable {
        let database: Mutex<Database>
        init(_ database: consuming sending Database) {
            self.database = Mutex(database)
        }
    }

    @Test func threadsTakeTurnsOnOneConnectionBehindAMutex() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path("shared.sqlite"))
        // The point is the locking, not durability: no fsync per commit keeps the test fast under load.
        try db.execute("PRAGMA synchronous = OFF; CREATE TABLE t(thread INTEGER, n INTEGER)")
        let shared = Shared(db)
        let threads = 4
        let perThread = 50
        let done = DispatchSemaphore(value: 0)
        let failures = Mutex<[String]>([])
        for thread in 0..<threads {
            Thread {
                defer { done.signal() }
                for n in 0..<perThread {
                    do {
                        try shared.database.withLock { db in
                            try db.transaction { try db.run("INSERT INTO t VALUES (?, ?)", [SQLiteValue(thread), SQLiteValue(n)]) }
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }.start()
        }
        for _ in 0..<threads {
            #expect(done.wait(timeout: .now() + 5) == .success)
        }
        #expect(failures.withLock { $0 } == [])
        let count = try shared.database.withLock { db in try db.scalar("SELECT count(*) FROM t") }
        #expect(count == .integer(Int64(threads * perThread)))
    }
}
