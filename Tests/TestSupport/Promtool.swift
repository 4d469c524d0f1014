import Foundation

/// Runs the real `promtool check metrics` (Debian's `prometheus` package) on rendered text.
public enum Promtool {
    public static let path = "/usr/bin/promtool"
    /// The status `checkMetrics` gives when promtool is not installed (the shell's "command not
    /// found"): a caller that expects 0 fails, so a missing promtool is a failure, never a skip.
    public static let notInstalled: Int32 = 127

    /// The exit status (0: no problem; 1: problems found) and the combined, trimmed output of
    /// `promtool check metrics < text`.
    public static func checkMetrics(_ text: String) throws -> (status: Int32, output: String) {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            return (notInstalled, "promtool not found at \(path): install Debian's `prometheus` package (apt-get install prometheus)")
        }
        // From a file, not a pipe: a pipe written before promtool's output is read could fill
        // both ways with a large exposition. Unlinked once open, so nothing is left behind.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("promtool-\(UUID().uuidString).prom")
        try Data(text.utf8).write(to: file)
        let input: FileHandle
        do {
            input = try FileHandle(forReadingFrom: file)
            try FileManager.default.removeItem(at: file)
        } catch {
            try? FileManager.default.removeItem(at: file)  // the error above is the one reported
            throw error
        }
        defer { try? input.close() }  // a read-only descriptor: nothing to lose on close
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["check", "metrics"]
        process.standardInput = input
        // One pipe for both streams: promtool reports lint problems on either.
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus,
                String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
