/// What a WAL checkpoint did, from `sqlite3_wal_checkpoint_v2`.
public struct CheckpointResult: Sendable, Hashable {
    /// Frames in the write-ahead log, or -1 when the database is not in WAL mode.
    public let walFrames: Int
    /// Frames copied back into the database file, or -1 when the database is not in WAL mode.
    public let checkpointedFrames: Int
}
