#if canImport(Glibc)
import Glibc
#endif

/// The standard `process_*` metrics, with client_golang's names and meanings, read from
/// `/proc` at each scrape (Linux only).
///
/// A value that cannot be read (no `/proc`, an unexpected format) leaves its family without a
/// sample rather than exporting a made-up number; HELP and TYPE are still printed, so the set
/// of families does not change.
public struct ProcessCollector: MetricCollector {
    /// Clock ticks per second, the unit of the CPU times in `/proc/self/stat`.
    private let ticksPerSecond: Double
    /// Bytes per page, the unit of the resident set size in `/proc/self/stat`.
    private let pageSize: Double
    /// Seconds since the epoch when the process started; fixed, so read once.
    private let startTime: Double?

    public init() {
        // 100 is the kernel's USER_HZ on every common architecture, should sysconf ever fail.
        let ticks = sysconf(Int32(_SC_CLK_TCK))
        ticksPerSecond = ticks > 0 ? Double(ticks) : 100
        let page = sysconf(Int32(_SC_PAGESIZE))
        pageSize = page > 0 ? Double(page) : 4096
        startTime = Self.readStartTime(ticksPerSecond: ticksPerSecond)
    }

    public func collect() -> [MetricFamily] {
        let stat = Self.readStat()
        func sample(_ value: Double?) -> [Sample] {
            value.map { [Sample(value: $0)] } ?? []
        }
        return [
            MetricFamily(name: "process_cpu_seconds_total",
                         help: "Total user and system CPU time spent in seconds.", type: .counter,
                         samples: sample(stat.map { Double($0.userTicks + $0.systemTicks) / ticksPerSecond })),
            MetricFamily(name: "process_resident_memory_bytes",
                         help: "Resident memory size in bytes.", type: .gauge,
                         samples: sample(stat.map { Double($0.residentPages) * pageSize })),
            MetricFamily(name: "process_virtual_memory_bytes",
                         help: "Virtual memory size in bytes.", type: .gauge,
                         samples: sample(stat.map { Double($0.virtualBytes) })),
            MetricFamily(name: "process_open_fds",
                         help: "Number of open file descriptors.", type: .gauge,
                         samples: sample(Self.countOpenFileDescriptors())),
            MetricFamily(name: "process_max_fds",
                         help: "Maximum number of open file descriptors.", type: .gauge,
                         samples: sample(Self.readMaxFileDescriptors())),
            MetricFamily(name: "process_start_time_seconds",
                         help: "Start time of the process since unix epoch in seconds.", type: .gauge,
                         samples: sample(startTime)),
        ]
    }

    static func readStat() -> ProcessStat? {
        readProcFile("/proc/self/stat").flatMap(ProcessStat.init(parsing:))
    }

    /// Boot time (`btime` in `/proc/stat`) plus the process's start offset, as client_golang does.
    static func readStartTime(ticksPerSecond: Double) -> Double? {
        guard let stat = readStat(), let text = readProcFile("/proc/stat") else { return nil }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
              let bootTime = Double(line.dropFirst("btime ".count).trimmingNewline()) else { return nil }
        return bootTime + Double(stat.startTicks) / ticksPerSecond
    }

    /// Entries of `/proc/self/fd`, which (as in client_golang) includes the descriptor used to
    /// list the directory.
    static func countOpenFileDescriptors() -> Double? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { $0.first == UInt8(ascii: ".") }
            if !isDot { count += 1 }
        }
        return Double(count)
    }

    /// The soft limit on open files from `/proc/self/limits`; `unlimited` is +Inf.
    static func readMaxFileDescriptors() -> Double? {
        guard let text = readProcFile("/proc/self/limits") else { return nil }
        return parseMaxFileDescriptors(text)
    }

    /// Parses the `Max open files  <soft>  <hard>  files` line of `/proc/[pid]/limits`.
    static func parseMaxFileDescriptors(_ text: String) -> Double? {
        let prefix = "Max open files"
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
              let soft = line.dropFirst(prefix.count).split(separator: " ").first else { return nil }
        if soft == "unlimited" { return .infinity }
        return UInt64(soft).map { Double($0) }
    }

    /// Reads a whole `/proc` file. Their reported size is 0, so this reads until end of file.
    static func readProcFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
