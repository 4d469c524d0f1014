import Foundation
import Glibc
import Testing
@testable import LiveActivityMonitor

@Suite struct FreedMemoryReturnTests {
    /// 40 MB freed in small blocks below a block still held: glibc keeps those pages resident
    /// (only an arena's top goes back by itself); a pass gives most of them back.
    @Test func aPassGivesFreedPagesBack() throws {
        let blocks = (0..<40_000).map { _ in malloc(1_000)! }
        for block in blocks { memset(block, 1, 1_000) }   // resident
        let held = malloc(1_000)!                          // above them: they are not the top
        defer { free(held) }
        for block in blocks { free(block) }
        let before = try #require(Self.residentBytes())
        #expect(FreedMemoryReturn.returnFreedPages())
        let after = try #require(Self.residentBytes())
        #expect(before - after > 20_000_000, "resident \(before) before the pass, \(after) after")
    }

    /// The thread stops when asked, and a second stop returns too.
    @Test func stopsOnceAndAgain() {
        let memoryReturn = FreedMemoryReturn()
        memoryReturn.stop()
        memoryReturn.stop()
    }

    static func residentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kB = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        return kB * 1024
    }
}
