/// How hard a commit tries to survive a power loss (`PRAGMA synchronous` in WAL mode).
public enum Durability: String, Sendable, CaseIterable {
    /// WAL with `synchronous=NORMAL`: a commit survives a crash or SIGKILL of the process; a power
    /// loss or kernel crash can lose the last transactions since the last checkpoint's sync.
    case normal
    /// WAL with `synchronous=FULL`: every commit is fsynced before it is acknowledged.
    case full
}
