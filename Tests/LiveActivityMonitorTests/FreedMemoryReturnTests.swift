import Foundation
import Glibc
import Testing
@testable import LiveActivityMonitor

@Suite struct FreedMemoryReturnTests {
    /// 40 MB freed in small blocks below a block still held: glibc keeps those pages resident
    /// (only an arena's top goes back by itself); a pass gives most of them back.
    @Test func aPassGivesFreedPagesBack() {
        let blocks = (0..<40_000).map { _ in malloc(1_000)! }
        for block in blocks { memset(block, 1, 1_000) }   // resident
        let held = malloc(1_000)!                          // above them: they are not the top
        defer { free(held) }
        for block in blocks { free(block) }
        let before = ServeProcess.memory(of: getpid()).resident
        #expect(FreedMemoryReturn.returnFreedPages())
        let after = ServeProcess.memory(of: getpid()).resident
        #expect(before > 0 && before - after > 20_000_000, "resident \(before) before the pass, \(after) after")
    }

    /// The thread stops when asked, and a second stop returns too.
    @Test func stopsOnceAndAgain() {
        let memoryReturn = FreedMemoryReturn()
        memoryReturn.stop()
        memoryReturn.stop()
    }
}
