import Foundation

/// Debian's `wrk`: keep-alive HTTP/1.1 load from 2 threads over 64 connections, with a Lua
/// script from `Tests/bench/` building each request.
struct Wrk {
    static let path = "/usr/bin/wrk"
    var threads = 2
    var connections = 64
    var seconds: Int

    struct Result {
        var requests: Int
        var requestsPerSecond: Double
        /// Answers other than 2xx/3xx, and connect/read/write/timeout errors: must be 0.
        var failures: Int
        /// CPU seconds wrk itself used (it shares the machine with the server it loads).
        var cpuSeconds: Double
        /// The 99th percentile of request latency, in seconds (wrk's `--latency` distribution).
        var p99Seconds: Double?
        var output: String
    }

    func run(url: String, script: String, _ scriptArguments: [String] = []) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.path)
        process.arguments = ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--timeout", "30s", "--latency",
                             "-s", script, url, "--"] + scriptArguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let before = Self.childrenCPU()
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let cpu = Self.childrenCPU() - before
        let output = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0,
              let rate = Self.number(after: "Requests/sec:", in: output),
              let requests = Self.number(after: "  ", before: " requests in", in: output)
        else { throw BenchError("wrk failed (\(process.terminationStatus)): \(output)") }
        var failures = Int(Self.number(after: "Non-2xx or 3xx responses:", in: output) ?? 0)
        if let line = output.split(separator: "\n").first(where: { $0.contains("Socket errors:") }) {
            failures += line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }.reduce(0, +)
        }
        return Result(requests: Int(requests), requestsPerSecond: rate, failures: failures, cpuSeconds: cpu,
                      p99Seconds: Self.p99(in: output), output: output)
    }

    /// "     99%    5.67ms" in the latency distribution, in seconds.
    static func p99(in output: String) -> Double? {
        guard let line = output.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("99%") })
        else { return nil }
        let text = line.trimmingCharacters(in: .whitespaces).dropFirst(3).trimmingCharacters(in: .whitespaces)
        let number = Double(text.prefix { $0.isNumber || $0 == "." }) ?? .nan
        let unit = text.drop { $0.isNumber || $0 == "." }
        switch unit {
        case "us": return number / 1e6
        case "ms": return number / 1e3
        case "s": return number
        case "m": return number * 60
        default: return nil
        }
    }

    /// CPU seconds of this process's finished children (wrk, once waited for; servers still run).
    private static func childrenCPU() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_CHILDREN.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    private static func number(after marker: String, in text: String) -> Double? {
        guard let range = text.range(of: marker) else { return nil }
        return Double(text[range.upperBound...].drop(while: { $0 == " " }).prefix(while: { $0.isNumber || $0 == "." }))
    }

    private static func number(after prefix: String, before marker: String, in text: String) -> Double? {
        guard let line = text.split(separator: "\n").first(where: { $0.contains(marker) }) else { return nil }
        return Double(line.drop(while: { $0 == " " }).prefix(while: \.isNumber))
    }

    /// `Tests/bench/NAME`, found from this source file (the bench runs from a checkout).
    static func script(_ name: String) -> String {
        let here = URL(fileURLWithPath: #filePath)
        return here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/bench/\(name)").path
    }
}
