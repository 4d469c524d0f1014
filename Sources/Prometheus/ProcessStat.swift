/// The fields of `/proc/[pid]/stat` (proc(5)) that ``ProcessCollector`` uses.
struct ProcessStat: Equatable {
    /// Field 14, `utime`, in clock ticks.
    var userTicks: UInt64
    /// Field 15, `stime`, in clock ticks.
    var systemTicks: UInt64
    /// Field 22, `starttime`: clock ticks after boot when the process started.
    var startTicks: UInt64
    /// Field 23, `vsize`, in bytes.
    var virtualBytes: UInt64
    /// Field 24, `rss`, in pages.
    var residentPages: UInt64

    /// Parses the one line of `/proc/[pid]/stat`. The command name (field 2) is in parentheses
    /// and may itself contain spaces and parentheses, so fields are counted from the last `)`.
    init?(parsing text: String) {
        guard let close = text.lastIndex(of: ")") else { return nil }
        // fields[0] is field 3 (state), so field n is fields[n - 3].
        let fields = text[text.index(after: close)...].split(separator: " ")
        func field(_ number: Int) -> UInt64? {
            let index = number - 3
            return index < fields.count ? UInt64(fields[index].trimmingNewline()) : nil
        }
        guard let user = field(14), let system = field(15), let start = field(22),
              let virtual = field(23), let resident = field(24) else { return nil }
        userTicks = user
        systemTicks = system
        startTicks = start
        virtualBytes = virtual
        residentPages = resident
    }
}
