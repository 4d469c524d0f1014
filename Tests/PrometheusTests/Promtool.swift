import Foundation
import Testing

/// Runs the real `promtool check metrics` (Debian's `prometheus` package) on rendered text.
enum Promtool {
    static let path = "/usr/bin/promtool"

    /// The exit status and combined stdout/stderr of `promtool check metrics < file`, or nil
    /// (with a recorded failure, never a silent skip) when promtool is not installed.
    static func checkMetrics(_ text: String) throws -> (status: Int32, output: String)? {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            Issue.record("promtool not found at \(path): install Debian's `prometheus` package (apt-get install prometheus)")
            return nil
        }
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("prometheus-tests-\(UUID().uuidString).prom")
        try Data(text.utf8).write(to: file)
        defer {
            do { try FileManager.default.removeItem(at: file) } catch {
                Issue.record("could not remove \(file.path): \(error)")
            }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["check", "metrics"]
        let input = try FileHandle(forReadingFrom: file)
        defer { try? input.close() }
        process.standardInput = input
        // One pipe for both streams: promtool reports lint problems on either.
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
