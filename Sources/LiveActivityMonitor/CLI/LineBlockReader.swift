import Glibc

/// A file's lines in blocks of at most `maxLines`, read a fixed number of bytes at a time: what
/// `import` holds is about one block and one read buffer, whatever the file's size.
///
/// Lines end at "\n" (a "\r" before it stays, for the parser to take as CRLF), the file's final
/// newline is optional, and a UTF-8 byte-order mark is skipped at the very start only. Blocks
/// number their lines as the file does, blank lines included. The file descriptor is closed in
/// `deinit`.
final class LineBlockReader {
    /// Consecutive lines of the file.
    struct Block {
        /// The lines joined by "\n", without a final one: an NDJSON body for `IngestDecoder`.
        var body: [UInt8]
        /// The number of the first line in the file, from 1.
        var firstLine: Int
        var lineCount: Int
        var lastLine: Int { firstLine + lineCount - 1 }

        /// Each line's bytes, blank ones included.
        var lines: [ArraySlice<UInt8>] {
            body.split(separator: LineBlockReader.newline, omittingEmptySubsequences: false)
        }
    }

    /// A failed `open` or `read`.
    struct ReadError: Error, CustomStringConvertible {
        let call: String, code: Int32
        var description: String { "\(call): \(String(cString: strerror(code)))" }
    }

    /// Large enough that the read calls cost nothing next to parsing, small next to a block of
    /// 1000 events.
    static let defaultReadSize = 1 << 20
    static let newline = UInt8(ascii: "\n")
    /// What some Windows tools put at the start of a UTF-8 file; the JSON parser refuses it.
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    let maxLines: Int
    private let descriptor: Int32
    private let readSize: Int
    /// The last read: `buffer[position..<filled]` is not cut into lines yet. Arrays, not `Data`:
    /// cutting `Data` paid an exclusivity check per byte (callgrind: a quarter of an import).
    private var buffer: [UInt8]
    private var filled = 0
    private var position = 0
    /// The number of the next block's first line.
    private(set) var nextLine = 1

    /// Opens the file and reads its start; throws when it cannot be opened or read (a directory
    /// opens, and fails at its first read). `readSize` is a parameter for the tests, which cut
    /// lines across reads with a few bytes.
    init(path: String, maxLines: Int, readSize: Int = LineBlockReader.defaultReadSize) throws(ReadError) {
        precondition(maxLines > 0 && readSize > 0)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(call: "open", code: errno) }
        descriptor = fd
        self.maxLines = maxLines
        self.readSize = readSize
        // Room for the whole mark even when the tests read a byte at a time.
        buffer = [UInt8](repeating: 0, count: max(readSize, Self.byteOrderMark.count))
        while filled < Self.byteOrderMark.count, try readMore() {}
        if buffer[..<filled].starts(with: Self.byteOrderMark) { position = Self.byteOrderMark.count }
    }

    deinit { close(descriptor) }

    /// The next block: `maxLines` lines, or fewer at the end of the file; nil after the last.
    func next() throws(ReadError) -> Block? {
        // Whole lines each with its "\n", then the start of the line the last read cut; a line
        // longer than a read grows here, across as many reads as it takes.
        var body: [UInt8] = []
        var lines = 0
        while lines < maxLines {
            if position == filled {
                position = 0
                filled = 0
                guard try readMore() else { break }
            }
            if let end = buffer[position..<filled].firstIndex(of: Self.newline) {
                body += buffer[position...end]
                position = end + 1
                lines += 1
            } else {
                body += buffer[position..<filled]
                position = filled
            }
        }
        // The newline that ends the block's last line is not part of the body; a last line
        // without one ends at the end of the file.
        if body.last == Self.newline { body.removeLast() } else if !body.isEmpty { lines += 1 }
        guard lines > 0 else { return nil }
        defer { nextLine += lines }
        return Block(body: body, firstLine: nextLine, lineCount: lines)
    }

    /// Appends up to `readSize` bytes of the file to the buffer's filled part; false at its end.
    private func readMore() throws(ReadError) -> Bool {
        let offset = filled, count = min(readSize, buffer.count - filled)
        while true {
            let read = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + offset, count) }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else { throw ReadError(call: "read", code: errno) }
            filled += read
            return read > 0
        }
    }
}
