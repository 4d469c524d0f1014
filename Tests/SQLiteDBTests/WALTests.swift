import Dispatch
import Foundation
import Synchronization
import Testing
import SQLiteDB

@Suite struct WALTests {
    /// What the reader thread saw, handed back to the test.
    final class ReaderReport: Sendable {
        let counts = Mutex<[Int64]>([])
        let failure = Mutex<String?>(nil)
    }

    @Test func readersAndTheWriterDoNotBlockEachOther() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("wal.sqlite")
        // A short timeout: in rollback-journal mode the writer's COMMIT would wait for the
        // reader's lock and fail with isBusy; in WAL mode it never waits.
        let writer = try Database(path: path, busyTimeoutMilliseconds: 200)
        try writer.enableWAL()
        try writer.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")

        let readerHolding = DispatchSemaphore(value: 0)
        let writerDone = DispatchSemaphore(value: 0)
        let readerDone = DispatchSemaphore(value: 0)
        let report = ReaderReport()
        let reader = Thread {
            defer { readerDone.signal() }
            do {
                let db = try Database(path: path, mode: .readOnly)
                let count = { () throws -> Int64 in try db.scalar("SELECT count(*) FROM t")?.int64Value ?? -1 }
                try db.transaction(.deferred) {
                    let before = try count()
                    report.counts.withLock { $0.append(before) }
                    readerHolding.signal()
                    _ = writerDone.wait(timeout: .now() + 5)
                    // Still inside the read: the snapshot does not move.
                    let inside = try count()
                    report.counts.withLock { $0.append(inside) }
                }
                let after = try count()
                report.counts.withLock { $0.append(after) }
            } catch {
                readerHolding.signal()
                report.failure.withLock { $0 = "\(error)" }
            }
        }
        reader.start()
        // Should the writer fail, release the reader at once rather than after its timeout.
        defer { writerDone.signal() }
        #expect(readerHolding.wait(timeout: .now() + 5) == .success)

        try writer.transaction { try writer.run("INSERT INTO t VALUES (2)") }
        // A second connection sees the commit while the reader still holds its old snapshot.
        let observer = try Database(path: path, mode: .readOnly)
        #expect(try observer.scalar("SELECT count(*) FROM t") == 2)
        writerDone.signal()
        #expect(readerDone.wait(timeout: .now() + 5) == .success)

        #expect(report.failure.withLock { $0 } == nil)
        #expect(report.counts.withLock { $0 } == [1, 1, 2])
    }

    @Test func checkpointTruncatesTheLog() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("ckpt.sqlite")
        let db = try Database(path: path)
        try db.enableWAL()
        try db.execute("CREATE TABLE t(x)")
        try db.transaction {
            for i in 0..<200 { try db.run("INSERT INTO t VALUES (?)", [.blob(Array(repeating: UInt8(i), count: 500))]) }
        }
        #expect((dir.fileSize("ckpt.sqlite-wal") ?? 0) > 0)

        let passive = try db.checkpoint(truncate: false)
        #expect(passive.walFrames > 0)
        #expect(passive.checkpointedFrames == passive.walFrames)
        try db.checkpoint(truncate: true)
        #expect(dir.fileSize("ckpt.sqlite-wal") == 0)

        #expect(try Database(path: path, mode: .readOnly).scalar("SELECT count(*) FROM t") == 200)
    }

    @Test func truncateCheckpointReportsBusyWhileAReaderHoldsTheLog() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("busy.sqlite")
        let db = try Database(path: path, busyTimeoutMilliseconds: 20)
        try db.enableWAL()
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let reader = try Database(path: path)
        let error = #expect(throws: SQLiteError.self) {
            try reader.transaction(.deferred) {
                _ = try reader.scalar("SELECT count(*) FROM t")
                try db.run("INSERT INTO t VALUES (2)")
                try db.checkpoint(truncate: true)
            }
        }
        #expect(error?.isBusy == true)
        try db.checkpoint(truncate: true)
    }
}
