import Foundation
import SQLiteDB

/// What the figures were measured on.
struct Machine {
    var processors = ProcessInfo.processInfo.activeProcessorCount
    var cpuModel = Machine.cpuModel()
    var memoryMB = Int(ProcessInfo.processInfo.physicalMemory >> 20)
    var kernel = Machine.kernel()
    var sqliteVersion = Machine.sqliteVersion()
    var wrk = Machine.firstLine(of: Wrk.path, ["--version"])
    var pushgateway = Machine.firstLine(of: Pushgateway.path, ["--version"])

    /// Jiffies spent busy and in total by all processors so far (/proc/stat), for the share of
    /// the whole machine a load kept busy: the server, wrk and the kernel's own threads (e.g.
    /// writeback), which per-process figures miss.
    static func cpuTimes() -> (busy: Double, total: Double) {
        let text = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) ?? ""
        // "cpu  user nice system idle iowait irq softirq steal …"
        let fields = text.prefix { $0 != "\n" }.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard fields.count >= 5 else { return (.nan, .nan) }
        let total = fields.prefix(8).reduce(0, +)
        return (total - fields[3] - fields[4], total)
    }

    /// The 1-, 5- and 15-minute load averages (/proc/loadavg), to print beside a timing.
    static var loadAverage: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return "load average " + text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    private static func cpuModel() -> String {
        let text = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix("model name") }
        return line.flatMap { $0.split(separator: ":", maxSplits: 1).last }.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
    }

    private static func kernel() -> String {
        var u = utsname()
        uname(&u)
        return withUnsafeBytes(of: u.release) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }

    private static func sqliteVersion() -> String {
        guard let db = try? Database(path: ":memory:"), case .text(let v)? = try? db.scalar("SELECT sqlite_version()") else {
            return "unknown"
        }
        return v
    }

    private static func firstLine(of executable: String, _ arguments: [String]) -> String {
        guard FileManager.default.isExecutableFile(atPath: executable) else { return "missing" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        guard (try? process.run()) != nil else { return "unknown" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? "unknown"
    }
}
