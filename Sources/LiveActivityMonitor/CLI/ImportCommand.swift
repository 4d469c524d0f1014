import Foundation

/// `import <file.ndjson>`: load events through the same validation and store as HTTP ingest.
enum ImportCommand {
    static let parser = ArgumentParser(
        command: "import", usage: "import [--db PATH|URI] [--db-password-file F] [--] <file.ndjson>",
        summary: """
            Validates and stores the events of an NDJSON file (one event per line; CRLF and blank
            lines are fine; not gzip, not stdin), 1000 lines per transaction; repeated ids are
            counted as duplicates. It stops at the first block with a bad line, naming the line:
            the blocks before it stay stored. Fix the line and run it again: events with an id
            are then counted as duplicates, events without one are stored again. It needs the
            database to itself: while the server runs it refuses to start (POST the file to
            /v1/events instead). With --db postgres://… it stores into PostgreSQL the same way,
            and refuses while a server leads on that database (stop the servers first: two
            writers would overwrite each other's counters).
            """,
        options: [CommandLineTool.dbOption, CommandLineTool.dbPasswordFileOption])

    /// What an import stored and, when it stopped early, the lines that say why.
    struct Outcome: Equatable {
        var stored = IngestSummary()
        var problems: [String] = []
    }

    static func run(_ args: [String], environment: [String: String]) throws -> Int32 {
        guard let parsed = try CommandLineTool.parse(parser, args, environment) else { return 0 }
        guard parsed.positionals.count == 1 else { throw UsageError("import takes exactly one file") }
        let file = parsed.positionals[0]
        let decoder = IngestDecoder()
        // A block at a time: read whole, a file took twice its size in memory .
        // Opening reads the file's start, so an unreadable file is refused here, before the store.
        let reader: LineBlockReader
        do { reader = try LineBlockReader(path: file, maxLines: decoder.maxEvents) } catch {
            throw UsageError("cannot read \(file) (\(error))")
        }
        let outcome: Outcome
        switch try CommandLineTool.databaseLocation(parsed) {
        case .sqlite(let path):
            let store = try EventStore(path: path)
            defer { store.close() }
            outcome = load(reader, named: file, into: store, decoder: decoder)
        case .postgres(let uri, let password):
            // A leading server holds the leader lock: refused, as `serve`'s file lock refuses an
            // import over SQLite. Held to the end, it keeps a server started meanwhile standing
            // by; that one then leads from the tables, the import's events included.
            let lock = try CommandLineTool.takeLeaderLock(
                uri: uri, password: password,
                refusal: "stop the servers on that database first (two writers would overwrite each other's counters), "
                    + "or POST the file to /v1/events")
            defer { lock.release() }
            let store = try PostgresEventStore(uri: uri, password: password)
            defer { store.close() }
            outcome = load(reader, named: file, into: store, decoder: decoder)
        }
        guard outcome.problems.isEmpty else {
            outcome.problems.forEach(CommandLineTool.printError)
            return 1
        }
        print("imported \(outcome.stored.accepted) events, \(outcome.stored.duplicates) duplicates, from \(file)")
        return 0
    }

    /// Decodes and stores the reader's blocks in order, one transaction each, up to the first
    /// that fails; the blocks before it stay stored.
    static func load(_ reader: LineBlockReader, named file: String, into store: some MonitorStore, decoder: IngestDecoder) -> Outcome {
        var outcome = Outcome()
        func storedSoFar(before line: Int) -> String {
            "stored so far: \(outcome.stored.accepted) events (\(outcome.stored.duplicates) duplicates)"
                + (line > 1 ? ", lines 1–\(line - 1)" : "")
        }
        do {
            while let block = try reader.next() {
                guard block.body.contains(where: { $0 > 32 }) else { continue }
                let events: [Event]
                do { events = try decoder.decode(block.body, format: .ndjson, firstLine: block.firstLine) } catch {
                    outcome.problems = ["\(file): \(describe(error, in: block))",
                                        storedSoFar(before: block.firstLine)
                                            + "; nothing from lines \(block.firstLine)–\(block.lastLine)"]
                    return outcome
                }
                switch store.ingest(events) {
                case .success(let s):
                    outcome.stored.accepted += s.accepted
                    outcome.stored.duplicates += s.duplicates
                case .failure(let error):
                    outcome.problems = ["\(file): lines \(block.firstLine)–\(block.lastLine): \(error.message)",
                                        storedSoFar(before: block.firstLine)]
                    return outcome
                }
            }
        } catch {
            // Only past the file's start (which opening read): the blocks before stay stored.
            outcome.problems = ["\(file): cannot read from line \(reader.nextLine) on: \(error)",
                                storedSoFar(before: reader.nextLine)]
        }
        return outcome
    }

    /// The decoder's message, with invalid events named by their line in the file (the decoder
    /// numbers events, and blank lines hold none).
    static func describe(_ error: APIError, in block: LineBlockReader.Block) -> String {
        guard case .invalidEvents(let errors) = error else { return error.message }
        let blank: Set<UInt8> = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r")]
        let lines = block.lines
        let eventLines = lines.indices.filter { !lines[$0].allSatisfy(blank.contains) }.map { block.firstLine + $0 }
        return errors.prefix(20).map { e in
            let line = e.index < eventLines.count ? "line \(eventLines[e.index])" : "event \(e.index + 1)"
            return "\(line): \(e.field.isEmpty ? "" : e.field + ": ")\(e.error)"
        }.joined(separator: "; ")
    }
}
