import Foundation

/// `import <file.ndjson>`: load events through the same validation and store as HTTP ingest.
enum ImportCommand {
    static let parser = ArgumentParser(
        command: "import", usage: "import <file.ndjson> [--db PATH]",
        summary: """
            Validates and stores the events of an NDJSON file (one event per line), 1000 per
            transaction; repeated ids are counted as duplicates. Run it while the server is stopped:
            a running server would not see the imported state until it restarts (POST the file to
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
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }  // the file's final newline ends a line
        var start = 0
        let decoder = IngestDecoder()
        while start < lines.count {
            let chunk = lines[start..<min(start + decoder.maxEvents, lines.count)]
            let body = Array(chunk.joined(separator: [UInt8(ascii: "\n")]))
            defer { start += decoder.maxEvents }
            guard body.contains(where: { $0 > 32 }) else { continue }
            let events: [Event]
            do { events = try decoder.decode(body, format: .ndjson) } catch {
                let place = chunk.count == 1 ? "line \(start + 1)" : "lines \(start + 1)–\(start + chunk.count)"
                CommandLineTool.printError("\(file): \(place): \(describe(error, firstLine: start))")
                CommandLineTool.printError("stored so far: \(total.accepted) events (\(total.duplicates) duplicates); nothing from this block")
                return 1
            }
            switch store.ingest(events) {
            case .success(let s):
                total.accepted += s.accepted
                total.duplicates += s.duplicates
            case .failure(let error):
                CommandLineTool.printError("\(file): \(describe(error, firstLine: start))")
                return 1
            }
        }
        print("imported \(total.accepted) events, \(total.duplicates) duplicates, from \(file)")
        return 0
    }

    static func describe(_ error: APIError, firstLine: Int) -> String {
        guard case .invalidEvents(let errors) = error else { return error.message }
        return errors.prefix(20).map { "event \(firstLine + $0.index + 1): \($0.field.isEmpty ? "" : $0.field + ": ")\($0.error)" }
            .joined(separator: "; ")
    }
}
