import Foundation
import Testing
@testable import LiveActivityReporter

/// The test server itself: a test leaves nothing behind in the temporary directory.
@Suite(.serialized)
struct LiveServerTests {
    /// SQLite deletes a database's -wal and -shm files when its last connection closes, which can
    /// happen while `stop()` removes the directory; repeated, as the race is lost only at times.
    @Test func stopDeletesTheServersDirectory() async throws {
        for round in 0..<10 {
            let idle = try LiveServer()
            idle.stop()
            #expect(!FileManager.default.fileExists(atPath: idle.directory), "round \(round): a server that stored nothing")

            let server = try LiveServer()
            let reporter = ActivityReporter(configuration: ReporterConfiguration(serverURL: server.url),
                                            sleep: SleepRecorder().immediate)
            await reporter.report(Samples.everyKind())
            #expect(await reporter.flush())
            _ = try await server.events(booking: "BK-1042")
            server.stop()
            #expect(!FileManager.default.fileExists(atPath: server.directory), "round \(round): a server that stored events")
        }
    }
}
