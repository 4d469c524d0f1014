import Foundation
import SQLiteDB
import Testing
@testable import LiveActivityMonitor

/// `import` reads its file a buffer at a time: whatever the buffer's size, and wherever its
/// reads cut lines, a BOM or a CRLF, it stores the same events and names the same lines as with
/// the default 1 MiB.
extension CommandLineTests {
    /// What importing `bytes` did, with the file read `readSize` bytes at a time: the outcome
    /// (messages name the file "events.ndjson") and the stored bodies in arrival order.
    static func importInProcess(_ bytes: [UInt8], readSize: Int) throws -> (outcome: ImportCommand.Outcome, bodies: [SQLiteValue]) {
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/events.ndjson", db = dir + "/db.sqlite"
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let decoder = IngestDecoder()
        let reader = try LineBlockReader(path: file, maxLines: decoder.maxEvents, readSize: readSize)
        let store = try EventStore(path: db)
        let outcome = ImportCommand.load(reader, named: "events.ndjson", into: store, decoder: decoder)
        store.close()
        let bodies = try Database(path: db, mode: .readOnly).query("SELECT body FROM events ORDER BY seq").map { $0[0] }
        return (outcome, bodies)
    }

    /// The outcome with the default buffer, after checking that each of `readSizes` gives the
    /// same outcome and stores the same bodies.
    static func importWithEveryReadSize(_ bytes: [UInt8], readSizes: [Int] = [1, 2, 7, 64],
                                        sourceLocation: SourceLocation = #_sourceLocation) throws -> ImportCommand.Outcome {
        let expected = try importInProcess(bytes, readSize: LineBlockReader.defaultReadSize)
        for size in readSizes {
            let got = try importInProcess(bytes, readSize: size)
            #expect(got.outcome == expected.outcome, "read size \(size)", sourceLocation: sourceLocation)
            #expect(got.bodies == expected.bodies, "read size \(size)", sourceLocation: sourceLocation)
        }
        #expect(expected.bodies.count == expected.outcome.stored.accepted, sourceLocation: sourceLocation)
        return expected.outcome
    }

    static func startedLine(_ n: Int) -> [UInt8] {
        Array(IngestTests.started("imp-\(n)", eventID: "e\(n)").jsonString.utf8)
    }

    static let lf: [UInt8] = [0x0A], crlf: [UInt8] = [0x0D, 0x0A]

    /// 2500 lines of varied lengths (ids of 1 to 4 digits), blank and blank-looking ones among
    /// them, some ending in CRLF, over three blocks: lines straddle every kind of read boundary.
    @Test func importCutsLinesAcrossReadsAsInOneRead() throws {
        var bytes: [UInt8] = []
        var events = 0
        for n in 1...2500 {
            switch n % 97 {
            case 0: break                               // an empty line
            case 1: bytes += Array(" \t ".utf8)          // a line of blanks only
            default:
                bytes += Self.startedLine(n)
                events += 1
            }
            bytes += n % 3 == 0 ? Self.crlf : Self.lf
        }
        let outcome = try Self.importWithEveryReadSize(bytes, readSizes: [1, 7, 64, 4096])
        #expect(outcome == ImportCommand.Outcome(stored: IngestSummary(accepted: events, duplicates: 0)), "\(outcome)")
    }

    /// The first line of the second block, and a line further in, named by their number in the
    /// file whatever the reads; the first block stays stored.
    @Test func importNamesABadLineAfterTheFirstBlockWhateverTheReads() throws {
        var lines = (0..<1500).map(Self.startedLine)
        lines.insert([], at: 1200)
        lines[1000] = Array("{\"type\": oops".utf8)                          // line 1001
        var outcome = try Self.importWithEveryReadSize(Array(lines.joined(separator: Self.lf)) + Self.lf, readSizes: [7])
        #expect(outcome.problems == [
            "events.ndjson: line 1001 is not valid JSON: unexpected 'o' at line 1001, column 10; expected a value",
            "stored so far: 1000 events (0 duplicates), lines 1–1000; nothing from lines 1001–1501",
        ])

        lines[1000] = Self.startedLine(1000)
        lines[1302] = Array("{\"type\":\"activity.started\"}".utf8)          // line 1303, after the blank one
        outcome = try Self.importWithEveryReadSize(Array(lines.joined(separator: Self.crlf)), readSizes: [7])
        #expect(outcome.problems.count == 2)
        #expect(outcome.problems.first?.hasPrefix("events.ndjson: line 1303: ") == true, "\(outcome.problems)")
        #expect(outcome.problems.first?.contains("line 1303: activity_id: required") == true, "\(outcome.problems)")
        #expect(outcome.problems.last == "stored so far: 1000 events (0 duplicates), lines 1–1000; nothing from lines 1001–1501")
    }

    /// A line longer than the read buffer (the default one's 1 MiB too: a valid event padded
    /// with blanks inside its object) grows across as many reads as it takes.
    @Test func importReadsALineLongerThanTheReadBuffer() throws {
        var long = Self.startedLine(2)
        long.insert(contentsOf: repeatElement(UInt8(ascii: " "), count: 3 << 20), at: 1)
        let start = Self.startedLine(1) + Self.lf + long + Self.crlf + Self.startedLine(3) + Self.lf
        var outcome = try Self.importWithEveryReadSize(start + long, readSizes: [7, 4096])
        #expect(outcome == ImportCommand.Outcome(stored: IngestSummary(accepted: 3, duplicates: 1)), "\(outcome)")

        outcome = try Self.importWithEveryReadSize(start + Array("{\"type\":\"activity.started\"}".utf8), readSizes: [7])
        #expect(outcome.problems.first?.hasPrefix("events.ndjson: line 4: ") == true, "\(outcome.problems)")
        #expect(outcome.problems.first?.contains("line 4: activity_id: required") == true, "\(outcome.problems)")
        #expect(outcome.problems.last == "stored so far: 0 events (0 duplicates); nothing from lines 1–4")

        // The real binary, with its default buffer.
        let dir = TestServer.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(start + long).write(to: URL(fileURLWithPath: dir + "/long.ndjson"))
        let r = try Self.run(["import", dir + "/long.ndjson", "--db", dir + "/db.sqlite"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("imported 3 events, 1 duplicates"), "\(r.stdout)")
    }

    /// The byte-order mark is skipped when the first reads bring it a byte or two at a time, and
    /// only at the start: a part of one, or one on line 2, is the parser's to refuse.
    @Test func importSkipsAByteOrderMarkSplitAcrossReads() throws {
        let bom = LineBlockReader.byteOrderMark
        let lines = (1...3).map(Self.startedLine)
        var outcome = try Self.importWithEveryReadSize(bom + Array(lines.joined(separator: Self.crlf)) + Self.crlf)
        #expect(outcome == ImportCommand.Outcome(stored: IngestSummary(accepted: 3, duplicates: 0)), "\(outcome)")

        outcome = try Self.importWithEveryReadSize(bom)
        #expect(outcome == ImportCommand.Outcome(), "a file of a mark alone holds no line: \(outcome)")

        outcome = try Self.importWithEveryReadSize(Array(bom.prefix(2)) + lines[0] + Self.lf)
        #expect(outcome.problems.first?.hasPrefix("events.ndjson: line 1 is not valid JSON") == true, "\(outcome.problems)")

        outcome = try Self.importWithEveryReadSize(lines[0] + Self.lf + bom + lines[1] + Self.lf)
        #expect(outcome.problems.first?.hasPrefix("events.ndjson: line 2 is not valid JSON") == true, "\(outcome.problems)")
    }

    /// Without a final newline the last line still counts, once; with one, no empty line follows
    /// it; a blank line at the end is a line of its own.
    @Test func importTakesAFileWithoutAFinalNewline() throws {
        let lines = (0..<1000).map(Self.startedLine)
        let body = Array(lines.joined(separator: Self.lf))
        var outcome = try Self.importWithEveryReadSize(body, readSizes: [7, 64, body.count, body.count - 1])
        #expect(outcome == ImportCommand.Outcome(stored: IngestSummary(accepted: 1000, duplicates: 0)), "\(outcome)")

        let bad = Array("{\"type\":\"activity.started\"}".utf8)
        for (tail, last) in [([UInt8](), 1001), (Self.lf, 1001), (Self.crlf, 1001), (Self.lf + Self.lf, 1002), (Self.crlf + Self.crlf, 1002)] {
            outcome = try Self.importWithEveryReadSize(body + Self.lf + bad + tail, readSizes: [7])
            #expect(outcome.problems.first?.hasPrefix("events.ndjson: line 1001: ") == true, "\(outcome.problems)")
            #expect(outcome.problems.first?.contains("line 1001: activity_id: required") == true, "\(outcome.problems)")
            #expect(outcome.problems.last == "stored so far: 1000 events (0 duplicates), lines 1–1000; nothing from lines 1001–\(last)",
                    "\(tail): \(outcome.problems)")
        }
    }

    /// CRLF line ends, with reads that cut between the CR and the LF: every event stored, and a
    /// bad line named by its number.
    @Test func importTakesCRLFLineEndsCutAnywhere() throws {
        var lines = (0..<1200).map(Self.startedLine)
        var outcome = try Self.importWithEveryReadSize(Array(lines.joined(separator: Self.crlf)) + Self.crlf)
        #expect(outcome == ImportCommand.Outcome(stored: IngestSummary(accepted: 1200, duplicates: 0)), "\(outcome)")

        lines[1100] = Array("{\"type\":\"activity.started\",}".utf8)
        outcome = try Self.importWithEveryReadSize(Array(lines.joined(separator: Self.crlf)) + Self.crlf, readSizes: [1, 7])
        #expect(outcome.problems.first?.hasPrefix("events.ndjson: line 1101 is not valid JSON") == true, "\(outcome.problems)")
        #expect(outcome.problems.last == "stored so far: 1000 events (0 duplicates), lines 1–1000; nothing from lines 1001–1200")
    }
}
