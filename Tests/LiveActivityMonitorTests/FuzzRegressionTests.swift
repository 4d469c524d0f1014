import Foundation
import JSON
import Testing
@testable import LiveActivityMonitor

/// What `Tests/fuzz.sh` found, kept as tests, and the seed corpus replayed through the fuzz
/// target's own checks (the `ingest-fuzzer` binary of the normal build replays files).
@Suite struct FuzzRegressionTests {
    static let corpus = TestServer.repositoryRoot + "/Tests/FuzzCorpus"

    static func decode(_ text: String, format: IngestDecoder.Format = .json) -> Result<[Event], APIError> {
        Result { () throws(APIError) -> [Event] in try IngestDecoder().decode(Array(text.utf8), format: format) }
    }

    /// Crash 1 (libFuzzer, after 137,348 executions): a date beyond Int64 milliseconds
    /// (`"occurred_at":17992233720368547758084996460`) made the validator's error message call
    /// `RFC3339.format`, whose `Int64(...)` conversion trapped: one request killed the server.
    @Test(arguments: ["17992233720368547758084996460", "1e19", "1e300", "-1e300", "1.7976931348623157e308",
                      "-9.3e15", "9223372036854775807", "253402300800", "-62167219201"])
    func dateFarOutOfRangeIsA422(_ literal: String) throws {
        let result = Self.decode(#"{"type":"activity.stale","activity_id":"a","occurred_at":"# + literal + "}")
        guard case .failure(.invalidEvents(let errors)) = result else {
            Issue.record("expected 422, got \(result)")
            return
        }
        #expect(errors.count == 1)
        #expect(errors.first?.field == "occurred_at")
        #expect(errors.first?.error.hasPrefix("outside 2000-01-01 … 2100-01-01: ") == true, "\(errors)")
    }

    @Test func yearsThatHaveAnRFC3339FormAreShownAsDates() throws {
        let result = Self.decode(#"{"type":"activity.stale","activity_id":"a","occurred_at":253402300799}"#)
        guard case .failure(.invalidEvents(let errors)) = result else {
            Issue.record("expected 422, got \(result)")
            return
        }
        #expect(errors.first?.error == "outside 2000-01-01 … 2100-01-01: 9999-12-31T23:59:59Z")
    }

    @Test func theCrashingInputItselfIsA422() throws {
        let data = try #require(FileManager.default.contents(atPath: Self.corpus + "/crash-date-past-int64.ndjson"))
        let result = Self.decode(String(decoding: data, as: UTF8.self), format: .ndjson)
        guard case .failure(.invalidEvents(let errors)) = result else {
            Issue.record("expected 422, got \(result)")
            return
        }
        #expect(errors.contains { $0.index == 1 && $0.field == "occurred_at" && $0.error.contains("outside") })
    }

    /// Every corpus file, crash inputs included, through the fuzz target's checks: decoder
    /// answers, writer round trip, HTML-safe output, no raw token kept.
    @Test func corpusReplaysThroughTheFuzzChecks() throws {
        let binary = URL(fileURLWithPath: CommandLineTests.binary).deletingLastPathComponent().path + "/ingest-fuzzer"
        #expect(FileManager.default.isExecutableFile(atPath: binary), "build it: swift build --product ingest-fuzzer")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = [Self.corpus]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        // Every regular file, those in subdirectories (http-heads/) too.
        let files = try FileManager.default.subpathsOfDirectory(atPath: Self.corpus).filter { path in
            var directory: ObjCBool = false
            return FileManager.default.fileExists(atPath: Self.corpus + "/" + path, isDirectory: &directory) && !directory.boolValue
        }.count
        #expect(p.terminationStatus == 0, "\(text)")
        #expect(text.contains("\(files) inputs replayed"), "\(text)")
    }
}
