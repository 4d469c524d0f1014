import Foundation

/// Where this checkout's files are, for tests that read fixtures or run the built binaries.
public enum Repository {
    /// The repository's root directory (this file is `Tests/TestSupport/Repository.swift`).
    public static var root: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    /// The `live-activity-monitor` executable: `LAM_BIN` if set, else the debug build's.
    public static var binary: String {
        ProcessInfo.processInfo.environment["LAM_BIN"] ?? root + "/.build/debug/live-activity-monitor"
    }
}
