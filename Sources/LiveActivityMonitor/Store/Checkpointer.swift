import Dispatch
import Foundation
import SQLiteDB

/// Copies committed pages from the write-ahead log into the database file on its own thread
/// and connection, so that the store's writer does not wait for the disk.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses the threshold, and ends
/// with two fsyncs: under single-event load the writer spent a large share of its time blocked
/// in them, with every waiting request held back (PERFORMANCE.md). A PASSIVE
/// checkpoint here copies what is committed without blocking the writer. It cannot restart the
/// log while commits keep arriving, so the writer keeps its own automatic checkpoint
/// (`EventStore.walAutocheckpointPages`): by then nearly every frame is copied and synced, so
/// that checkpoint is short, and it lets the log start over from its beginning.
/// (Public for the benchmark's storage limit, which writes with the same help.)
public final class Checkpointer: Sendable {
    /// How often new frames are copied (a pass with nothing new reads the log's header only).
    static let interval: DispatchTimeInterval = .milliseconds(50)

    private let stopRequested = DispatchSemaphore(value: 0)
    private let stopped = Gate()

    public init(path: String) throws {
        let db = try Database(path: path)
        // The checkpoint's own syncs: of the log before copying, of the file after.
        try db.execute("PRAGMA synchronous = NORMAL")
        let slot = ConnectionSlot(db)
        Thread.start(named: "checkpointer") { [self] in run(slot) }
    }

    /// Stops the thread once its current pass is done (the writer's checkpoint at close
    /// covers the rest, and must not find this one running). Idempotent, like the store's and
    /// retention's stops: a later caller returns once stopped too.
    public func stop() {
        stopRequested.signal()
        stopped.wait()
    }

    private func run(_ slot: ConnectionSlot) {
        while stopRequested.wait(timeout: .now() + Self.interval) == .timedOut {
            // Errors are left to the writer: busy means another checkpoint is running (the
            // writer's or retention's), and a failing disk fails the writer's commits too,
            // which is what readiness and the answers report.
            _ = try? slot.database?.checkpoint(truncate: false)
        }
        slot.database = nil  // closed before stop() returns
        stopped.open()
    }
}
