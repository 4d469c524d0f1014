import Foundation

/// A server the bench runs in its own process: started, waited for until it listens, measured
/// (`/proc/PID/status`) and stopped with SIGTERM.
final class ChildProcess {
    let name: String
    let process: Process
    /// The port the child logged (or was given).
    let port: Int
    /// Seconds from launch until the child logged that it listens (or answered `readyPath`).
    let startSeconds: Double
    /// Its stdout and stderr.
    let output: LogBuffer

    private init(name: String, process: Process, port: Int, startSeconds: Double, output: LogBuffer) {
        self.name = name
        self.process = process
        self.port = port
        self.startSeconds = startSeconds
        self.output = output
    }

    /// The bench binary itself, in one of its server modes: ready once it has logged
    /// "listening on http://…:PORT" and `GET /-/ready` answers 200.
    /// `executable`: another build's `live-activity-monitor` (the same `serve` arguments).
    static func bench(_ name: String, executable: String = BenchRunner.executablePath, arguments: [String],
                      timeout: Double = 120) throws -> ChildProcess {
        try launch(name, executable: executable, arguments: arguments, timeout: timeout) { log in
            guard let range = log.range(of: "listening on http://127.0.0.1:"),
                  let port = Int(log[range.upperBound...].prefix(while: \.isNumber)) else { return nil }
            return HTTPProbe.status(port: port, path: "/-/ready") == 200 ? port : nil
        }
    }

    /// Any server on a port chosen beforehand, ready once `readyPath` answers 200.
    static func external(_ name: String, executable: String, arguments: [String], port: Int,
                         readyPath: String, timeout: Double = 30) throws -> ChildProcess {
        try launch(name, executable: executable, arguments: arguments, timeout: timeout) { _ in
            HTTPProbe.status(port: port, path: readyPath) == 200 ? port : nil
        }
    }

    private static func launch(_ name: String, executable: String, arguments: [String], timeout: Double,
                               ready: (String) -> Int?) throws -> ChildProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        let output = LogBuffer()
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil; return }
            output.append(String(decoding: data, as: UTF8.self))
        }
        let started = Stopwatch.now()
        try process.run()
        while true {
            if let port = ready(output.contents) {
                return ChildProcess(name: name, process: process, port: port,
                                    startSeconds: Stopwatch.now() - started, output: output)
            }
            guard process.isRunning else {
                throw BenchError("\(name) exited: \(output.contents)")
            }
            guard Stopwatch.now() - started < timeout else {
                process.terminate()
                throw BenchError("\(name) did not start within \(Int(timeout)) s: \(output.contents)")
            }
            usleep(1_000)
        }
    }

    var pid: Int32 { process.processIdentifier }

    /// A field of /proc/PID/status in bytes (VmHWM = peak resident, VmRSS = resident now).
    func memoryBytes(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }

    /// SIGTERM, then waits for the exit (SIGKILL after 30 s).
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Stopwatch.now() + 30
        while process.isRunning && Stopwatch.now() < deadline { usleep(5_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }
}

extension ChildProcess {
    /// User + system CPU seconds the child's threads named `name` have used so far (summed if
    /// several have the name), from /proc/PID/task/*/stat.
    func threadCPUSeconds(named name: String) -> Double {
        ThreadCPU.threads(of: pid, named: name).values.reduce(0, +)
    }

    /// User + system CPU seconds the child has used so far (/proc/PID/stat).
    var cpuSeconds: Double { ThreadCPU.process(pid) }
}

extension ChildProcess {
    /// Waits until the child uses under 2% of a core for 200 ms (e.g. requests that wrk left
    /// behind are finished), so that one load does not spill into the next measurement.
    func waitUntilIdle(timeout: Double = 120) {
        let deadline = Stopwatch.now() + timeout
        while Stopwatch.now() < deadline {
            let before = cpuSeconds
            usleep(200_000)
            if cpuSeconds - before < 0.004 { return }
        }
    }
}
