import Foundation
import HTTPServer
import Synchronization

final class LockedCounter: Sendable {
    private let count = Mutex(0)
    func add(_ n: Int) { count.withLock { $0 += n } }
    var value: Int { count.withLock { $0 } }
}

enum HTTPClientFactory {
    static func make(port: Int) -> HTTPClient { HTTPClient(port: port) }
}

/// The real promtool from Debian's `prometheus` package; a missing promtool is a failure, not a skip.
enum Promtool {
    static let path = "/usr/bin/promtool"

    static func checkMetrics(_ text: String) throws -> (Int32, String) {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            return (127, "promtool not found at \(path): install Debian's 'prometheus' package")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["check", "metrics"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

/// Lines a test's server logged (`MonitorConfiguration.log`), from any thread.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var value: [String] { lines.withLock { $0 } }
}

/// A value that threads of a test set and the test reads.
final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<R>(_ body: (inout Value) -> R) -> R { value.withLock { body(&$0) } }
}
