import Foundation

/// CPU seconds from /proc: a process's or its threads', by the kernel's own accounting
/// (user + system, fields 14 and 15 of `stat`), read the same way for the bench's own threads
/// and for its children's.
enum ThreadCPU {
    /// User + system seconds in a `/proc/…/stat` text; nil if it is not one. The command name
    /// (field 2) may hold spaces and parentheses, so fields are counted after its last `)`.
    static func seconds(stat text: String, ticksPerSecond: Double = Double(sysconf(Int32(_SC_CLK_TCK)))) -> Double? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        // Fields after the command name: state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }

    /// User + system seconds of the process `pid` so far; NaN if it is gone.
    static func process(_ pid: pid_t) -> Double {
        (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)).flatMap { seconds(stat: $0) } ?? .nan
    }

    /// User + system seconds of each thread of `pid` named `name` (its `comm`), by thread id.
    static func threads(of pid: pid_t, named name: String) -> [String: Double] {
        each(of: pid, named: name, file: "stat") { seconds(stat: $0) }
    }

    /// Seconds on a processor of each thread of `pid` named `name`, by thread id, from
    /// `schedstat`: nanoseconds, the clock `CLOCK_THREAD_CPUTIME_ID` reads, where `stat`'s
    /// ticks are 10 ms apart (too coarse for a run of a few hundred milliseconds).
    static func runtimes(of pid: pid_t, named name: String) -> [String: Double] {
        each(of: pid, named: name, file: "schedstat") { seconds(schedstat: $0) }
    }

    /// The first field of a `schedstat` text (nanoseconds on a processor), in seconds.
    static func seconds(schedstat text: String) -> Double? {
        text.split(separator: " ").first.flatMap { Double($0) }.map { $0 / 1e9 }
    }

    /// `read` of the file `file` of each thread of `pid` named `name`, by thread id.
    private static func each(of pid: pid_t, named name: String, file: String, read: (String) -> Double?) -> [String: Double] {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return [:] }
        var byThread: [String: Double] = [:]
        for task in tasks {
            guard let comm = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                  let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/\(file)", encoding: .utf8),
                  let value = read(text) else { continue }
            byThread[task] = value
        }
        return byThread
    }

    /// CPU seconds the threads named `name` used between two `threads(of:named:)` (or
    /// `runtimes(of:named:)`) readings:
    /// a thread started in between counts from zero (one that ended in between is not seen).
    static func used(from before: [String: Double], to after: [String: Double]) -> Double {
        after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
    }
}
