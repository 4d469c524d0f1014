import Foundation

/// `import <file.ndjson>`: load events through the same validation and store as HTTP ingest.
enum ImportCommand {
    static let parser = ArgumentParser(
        command: "import", usage: "import [--db PATH] [--] <file.ndjson>",
        summary: """
            Validates and stores the events of an NDJSON file (one event per line; CRLF and blank
            lines are fine; not gzip, not stdin), 1000 lines per transaction; repeated ids are
            counted as duplicates. It stops at the first block with a bad line, naming the line:
            the blocks before it stay stored. Fix the line and run it again: events with an id
            are then counted as duplicates, events without one are stored again. It needs the
            database to itself: while the server runs it refuses to start (POST the file to
            /v1/events instead).
            """,
        options: [CommandLineTool.dbOption])

    static func run(_ args: [String], environment: [String: String]) throws -> Int32 {
        guard let parsed = try CommandLineTool.parse(parser, args, environment) else { return 0 }
        guard parsed.positionals.count == 1 else { throw UsageError("import takes exactly one file") }
        let file = parsed.positionals[0]
        // As an array, not `Data`: splitting `Data` paid an exclusivity check per byte (callgrind:
        // a quarter of an import's instructions). The `Data` is released once copied.
        guard let bytes = FileManager.default.contents(atPath: file).map({ [UInt8]($0) }) else {
            throw UsageError("cannot read \(file)")
        }
        let store = try EventStore(path: parsed.values["db"] ?? MonitorConfiguration().databasePath)
        defer { store.close() }

        var total = IngestSummary()
        // Some Windows tools start UTF-8 files with a byte-order mark; the JSON parser refuses one.
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let content = bytes.starts(with: bom) ? bytes[bom.count...] : bytes[...]
        var lines = content.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }  // the file's final newline ends a line
        var start = 0
        let decoder = IngestDecoder()
        while start < lines.count {
            let chunk = lines[start..<min(start + decoder.maxEvents, lines.count)]
            let body = Array(chunk.joined(separator: [UInt8(ascii: "\n")]))
            defer { start += decoder.maxEvents }
            guard body.contains(where: { $0 > 32 }) else { continue }
            let events: [Event]
            let first = start + 1, last = start + chunk.count
            do { events = try decoder.decode(body, format: .ndjson, firstLine: first) } catch {
                CommandLineTool.printError("\(file): \(describe(error, lines: chunk, firstLine: first))")
                CommandLineTool.printError("stored so far: \(total.accepted) events (\(total.duplicates) duplicates)"
                    + (start > 0 ? ", lines 1–\(start)" : "") + "; nothing from lines \(first)–\(last)")
                return 1
            }
            switch store.ingest(events) {
            case .success(let s):
                total.accepted += s.accepted
                total.duplicates += s.duplicates
            case .failure(let error):
                CommandLineTool.printError("\(file): lines \(first)–\(last): \(error.message)")
                CommandLineTool.printError("stored so far: \(total.accepted) events (\(total.duplicates) duplicates)"
                    + (start > 0 ? ", lines 1–\(start)" : ""))
                return 1
            }
        }
        print("imported \(total.accepted) events, \(total.duplicates) duplicates, from \(file)")
        return 0
    }

    /// The decoder's message, with invalid events named by their line in the file (the decoder
    /// numbers events, and blank lines hold none).
    static func describe(_ error: APIError, lines: ArraySlice<ArraySlice<UInt8>>, firstLine: Int) -> String {
        guard case .invalidEvents(let errors) = error else { return error.message }
        let blank: Set<UInt8> = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r")]
        let eventLines = lines.indices.filter { !lines[$0].allSatisfy(blank.contains) }
            .map { firstLine + $0 - lines.startIndex }
        return errors.prefix(20).map { e in
            let line = e.index < eventLines.count ? "line \(eventLines[e.index])" : "event \(e.index + 1)"
            return "\(line): \(e.field.isEmpty ? "" : e.field + ": ")\(e.error)"
        }.joined(separator: "; ")
    }
}
