import Dispatch
import Foundation
import SQLiteDB

/// Readiness (`GET /-/ready`: database open and writable) and recovery after a write failure.
///
/// A failed commit (disk full, read-only file, I/O error, the file deleted or replaced) sets
/// `writeFailure`; the next good commit of events clears it (a commit of counters alone is too
/// small to prove that a request would fit). So that the server comes back on its own when space returns even if no
/// client writes, `/-/ready` probes a failing store, at most once a second, on the writer
/// thread. What the probe takes as proof of writability:
/// - a real commit, not a rolled-back or empty transaction (those never touch the disk): the
///   schema version is written back with its own value, so COMMIT appends a page to the WAL;
/// - that alone may succeed on a full disk (after a checkpoint the WAL is rewritten from its
///   start, in space the file already has), so the file system holding the database must also
///   have `minimumFreeBytes` free (`statvfs`), and the database must be `minimumFreePages` below
///   its `max_page_count`.
/// A database that SQLite opened read-only (the file was not writable at start) stays read-only
/// for the life of the process, since every connection to it shares that state: after fixing the
/// permissions, restart the server. Reads and `/metrics` keep working meanwhile.
extension EventStore {
    /// Free space the file system must have before a failing store is called writable again:
    /// enough for a full-size request (1 MiB body by default) to reach the WAL.
    static let minimumFreeBytes: Int64 = 1 << 20
    /// Pages the database must still be able to grow by (256 × 4 KiB = 1 MiB), for the same reason.
    static let minimumFreePages: Int64 = 256
    /// At most one probe per second, however often `/-/ready` is asked.
    static let probeIntervalNanoseconds: UInt64 = 1_000_000_000
    /// `PRAGMA journal_size_limit` for every connection that writes: after a checkpoint the WAL
    /// is truncated back to this size, so one burst does not keep a large WAL file for ever.
    static let walSizeLimit = 32 << 20

    /// Why the server is not ready, or nil when the database is open and writable.
    ///
    /// Cheap when healthy (one read of the database header on a pooled read connection). While
    /// the store is failing it probes (see the type's notes) at most once a second and
    /// otherwise answers with the last failure.
    public func readinessProblem() -> String? {
        if isClosed { return "the store is closed" }
        if let problem = fileLock.fileProblem() {
            recordWriteProblem(problem)
            return problem
        }
        do {
            _ = try readers.read { try $0.scalar("PRAGMA schema_version") }
        } catch {
            return "the database cannot be read: \(Self.writeProblem(error))"
        }
        guard let failure = writeFailure.withLock({ $0 }) else { return nil }
        let now = DispatchTime.now().uptimeNanoseconds
        let due = lastProbe.withLock { last in
            guard now &- last >= Self.probeIntervalNanoseconds else { return false }
            last = now
            return true
        }
        guard due else { return failure }
        if case .failure(let error) = submit(.probe) { return error.message }
        return nil
    }

    /// Sets (or with nil clears) why the store cannot write (`WriteProblem`).
    func recordWriteProblem(_ problem: String?) {
        WriteProblem.record(problem, in: writeFailure, log: log)
    }

    /// Runs a maintenance job on the writer thread, outside any transaction.
    func maintain(_ job: WriteJob, _ db: Database) {
        switch job.kind {
        case .probe:
            let problem = probe(db)
            recordWriteProblem(problem)
            job.finish(problem.map { .failure(.unavailable($0)) } ?? .success(IngestSummary()))
        case .withConnection(let body):
            do {
                try body(db)
                job.finish(.success(IngestSummary()))
            } catch {
                job.finish(.failure(.unavailable(Self.writeProblem(error))))
            }
        case .ingest, .sweep:
            preconditionFailure("writes go through commit(_:_:), not maintain(_:_:)")
        }
    }

    /// Why the store cannot write, or nil when it can.
    private func probe(_ db: Database) -> String? {
        if let problem = fileLock.fileProblem() { return problem }
        if let problem = spaceProblem(db) { return problem }
        do {
            try Self.probeCommit(db)
            return nil
        } catch {
            return Self.writeProblem(error)
        }
    }

    /// A commit that must write a page: `user_version` rewritten with its own value dirties the
    /// database header, so COMMIT appends a frame to the WAL (and syncs it under `full`).
    private static func probeCommit(_ db: Database) throws {
        try db.transaction(.immediate) {
            try db.setUserVersion(try db.userVersion)
        }
    }

    /// Too little room on the file system, or under `max_page_count`, for a request to fit.
    private func spaceProblem(_ db: Database) -> String? {
        let directory = (path as NSString).deletingLastPathComponent
        var fs = statvfs()
        if statvfs(directory.isEmpty ? "." : directory, &fs) == 0 {
            let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
            if free < Self.minimumFreeBytes {
                return "the disk holding the database is full (\(free) bytes free, \(Self.minimumFreeBytes) needed)"
            }
        }
        do {
            func pragma(_ name: String) throws -> Int64 { try db.scalar("PRAGMA \(name)")?.int64Value ?? 0 }
            let limit = try pragma("max_page_count")
            let room = limit - (try pragma("page_count")) + (try pragma("freelist_count"))
            if room < Self.minimumFreePages {
                return "the database is full (it reached max_page_count = \(limit) pages)"
            }
        } catch {
            return Self.writeProblem(error)
        }
        return nil
    }

    /// A write failure in words an operator can act on (never with bound values: SQLite's
    /// messages do not carry them).
    static func writeProblem(_ error: any Error) -> String {
        guard let e = error as? SQLiteError else { return "store error: \(error)" }
        if e.isDiskFull { return "the disk holding the database is full, or the database reached its size limit" }
        if e.isReadOnly {
            return "the database is read-only for this server (fix the permissions of the file, its -wal and -shm "
                + "files and its directory, then restart)"
        }
        if e.code == 10 { return "the database file could not be written or read (\(e.message))" }  // SQLITE_IOERR
        return "the database could not commit (\(e.message))"
    }
}
