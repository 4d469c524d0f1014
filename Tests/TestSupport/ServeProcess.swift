import Foundation
import Glibc

/// The real `live-activity-monitor serve` binary (`Repository.binary`) on port 0, with its
/// stderr log captured. Stopped by `stop()`, or terminated when the object goes away if a
/// test never got to stop it.
public final class ServeProcess {
    public let process = Process()
    public let port: Int
    private let stderr = Pipe()
    private var logSoFar = ""

    /// Starts `serve --port 0` with `arguments` and waits for its "listening on" line.
    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: Repository.binary)
        process.arguments = ["serve", "--port", "0"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        var found: Int?
        while found == nil, Date() < deadline, process.isRunning {
            logSoFar += String(decoding: stderr.fileHandleForReading.availableData, as: UTF8.self)
            if let range = logSoFar.range(of: "listening on http://127.0.0.1:") {
                found = Int(logSoFar[range.upperBound...].prefix { $0.isNumber })
            }
        }
        guard let found else {
            process.terminate()
            process.waitUntilExit()
            throw TestFailure("serve did not start: \(logSoFar)")
        }
        port = found
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// The server's resident memory now and at its peak (VmRSS, VmHWM), in bytes.
    public func memory() -> (resident: Int, peak: Int) { Self.memory(of: process.processIdentifier) }

    /// The resident memory of the process `pid` now and at its peak (VmRSS, VmHWM), in bytes
    /// (0 when unreadable).
    public static func memory(of pid: pid_t) -> (resident: Int, peak: Int) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func value(_ name: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }),
                  let kB = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
            return kB * 1024
        }
        return (value("VmRSS"), value("VmHWM"))
    }

    /// Kills the server with SIGKILL (no stop at all: a crash, or a machine gone) and waits for it.
    public func kill() {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits up to `seconds` for the server to exit by itself; its status and whole stderr
    /// log, or nil if it is still running.
    public func waitForExit(seconds: Double) -> (status: Int32, log: String)? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        guard !process.isRunning else { return nil }
        logSoFar += String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, logSoFar)
    }

    /// Stops the server with SIGTERM; returns its exit status and whole stderr log.
    public func stop() -> (status: Int32, log: String) {
        process.terminate()
        process.waitUntilExit()
        logSoFar += String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, logSoFar)
    }
}
