/// How hard a commit tries to survive a power loss (`PRAGMA synchronous` in WAL mode).
///
/// Either way a request is one transaction: after any crash it is there whole or not at all,
/// and the file is never corrupt (WAL frames carry checksums; a torn tail is discarded).
public enum Durability: String, Sendable, CaseIterable {
    /// WAL with `synchronous=NORMAL` (the default): a request is acknowledged once its commit is
    /// written to the WAL file, before that reaches the disk. It survives a crash or SIGKILL of
    /// the process (the kernel holds the data). A power loss or kernel crash can lose what the
    /// kernel had not written back yet: at most the last ~30 s of acknowledged requests (Linux
    /// writes dirty pages back after `vm.dirty_expire_centisecs`, 30 s by default), less when a
    /// checkpoint (every ~1000 WAL pages) has synced the WAL meanwhile.
    case normal
    /// WAL with `synchronous=FULL`: the WAL is fsynced before each group commit is acknowledged,
    /// so an acknowledged request survives a power loss too (on a disk that honours flushes).
    /// Costs one fsync per group commit: roughly half the single-event request rate here.
    case full
}
