import Foundation
import Testing
@testable import live_activity_monitor_bench

@Suite struct BenchOptionsTests {
    /// `--out` names a file from the working directory: a bare name once failed to write after the
    /// whole run (no directory part to create), losing the results.
    @Test func outIsReadFromTheWorkingDirectory() throws {
        let cwd = FileManager.default.currentDirectoryPath
        #expect(try BenchOptions(["--out", "results.json"]).output == cwd + "/results.json")
        #expect(try BenchOptions(["--out", "runs/../b.json"]).output == cwd + "/b.json")
        #expect(try BenchOptions(["--out", "/tmp/x/a.json"]).output == "/tmp/x/a.json")
        #expect(try BenchOptions([]).output == nil)
    }
}
