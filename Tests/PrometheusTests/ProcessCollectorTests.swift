import Foundation
import Testing
@testable import Prometheus

@Suite struct ProcessCollectorTests {
    private static func value(_ families: [MetricFamily], _ name: String) -> Double? {
        guard let family = families.first(where: { $0.name == name }),
              case .number(let value)? = family.samples.first?.value else { return nil }
        return value
    }

    @Test func valuesArePlausible() throws {
        let families = ProcessCollector().collect()
        #expect(families.map(\.name).sorted() == [
            "process_cpu_seconds_total", "process_max_fds", "process_open_fds",
            "process_resident_memory_bytes", "process_start_time_seconds", "process_virtual_memory_bytes",
        ])
        let cpu = try #require(Self.value(families, "process_cpu_seconds_total"))
        let resident = try #require(Self.value(families, "process_resident_memory_bytes"))
        let virtual = try #require(Self.value(families, "process_virtual_memory_bytes"))
        let openFDs = try #require(Self.value(families, "process_open_fds"))
        let maxFDs = try #require(Self.value(families, "process_max_fds"))
        let start = try #require(Self.value(families, "process_start_time_seconds"))
        let now = Date().timeIntervalSince1970

        #expect(cpu >= 0)
        #expect(resident > 0)
        #expect(virtual >= resident)
        #expect(openFDs > 0)
        #expect(maxFDs >= openFDs)
        // btime has whole-second resolution, hence the slack in the future.
        #expect(start > now - 3600 && start <= now + 2, "start \(start), now \(now)")
    }

    @Test func openFDsCountsFilesThisTestHoldsOpen() throws {
        let handles = try (0..<64).map { _ in try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/stat")) }
        let during = try #require(ProcessCollector.countOpenFileDescriptors())
        for handle in handles { try handle.close() }
        // Other tests open and close files in parallel, so only a lower bound is certain:
        // these 64, plus stdin, stdout and stderr.
        #expect(during >= 64 + 3)
    }

    @Test func statParsingSkipsACommandNameWithSpacesAndParentheses() throws {
        let line = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 500 0 0 0 "
            + "250 150 0 0 20 0 4 0 123456 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0\n"
        let stat = try #require(ProcessStat(parsing: line))
        #expect(stat.userTicks == 250)
        #expect(stat.systemTicks == 150)
        #expect(stat.startTicks == 123456)
        #expect(stat.virtualBytes == 104_857_600)
        #expect(stat.residentPages == 2560)
        #expect(ProcessStat(parsing: "4242 (truncated) S 1 2") == nil)
    }

    @Test func maxFDsParsing() {
        let limits = """
            Limit                     Soft Limit           Hard Limit           Units
            Max processes             63304                63304                processes
            Max open files            1024                 524288               files
            """
        #expect(ProcessCollector.parseMaxFileDescriptors(limits) == 1024)
        #expect(ProcessCollector.parseMaxFileDescriptors("Max open files            unlimited            unlimited            files") == .infinity)
        #expect(ProcessCollector.parseMaxFileDescriptors("Max processes 1 1 processes") == nil)
    }
}
