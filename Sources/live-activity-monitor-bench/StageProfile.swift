import Foundation
import LiveActivityMonitor

/// Where batched ingest time goes, without HTTP: the decoder alone (parse, validate,
/// fingerprint), then the store alone (one submitter, 500-event requests, group commit).
/// Both in this process, one thread each, on the events of the batched wrk script. The same
/// events are also decoded one per body, as single-event requests send them (the decoder's
/// one-object fast path only applies there).
struct StageProfile {
    let directory: String
    let lines: [String]
    let activities: Int
    let now: Double

    /// One round's CPU microseconds per event, measured with CPU clocks (steadier than wall time
    /// on a shared machine).
    struct Figures {
        /// Decoding the NDJSON bodies, on this thread.
        var decode: Double
        /// Decoding each event as its own body, on this thread.
        var decodeSingle: Double
        /// Storing, the whole process (this thread waiting, the writer, its checkpointer).
        var store: Double
        /// Storing, the store's writer thread alone: the storage limit's inserting thread's like.
        var storeWriter: Double
    }

    /// The store stage's request, and so its commit (one submitter).
    static let eventsPerCommit = 500

    func run() throws -> Figures {
        let per = Self.eventsPerCommit
        let bodies = stride(from: 0, to: lines.count, by: per).map {
            Array(lines[$0..<min($0 + per, lines.count)].joined(separator: "\n").utf8)
        }
        let decoder = IngestDecoder()
        var batches: [[Event]] = []
        let decodeStart = Stopwatch.cpu(CLOCK_THREAD_CPUTIME_ID)
        for body in bodies { batches.append(try decoder.decode(body, format: .ndjson)) }
        let decodeSeconds = Stopwatch.cpu(CLOCK_THREAD_CPUTIME_ID) - decodeStart
        let singleSeconds = try decodeSingles()
        let path = directory + "/stages-\(UUID().uuidString).sqlite"
        let store = try EventStore(path: path)
        defer { store.close() }
        let set = Dataset(prefix: "w", now: now)
        for chunk in stride(from: 0, to: activities, by: 1000) {
            let starts = (chunk..<min(chunk + 1000, activities)).map { set.start($0, age: 3600) }
            guard case .success = store.ingest(try decoder.decode(Array(starts.joined(separator: "\n").utf8), format: .ndjson)) else {
                throw BenchError("stage profile: could not start activities")
            }
        }
        let storeStart = Stopwatch.cpu(CLOCK_PROCESS_CPUTIME_ID)
        let writerBefore = ThreadCPU.runtimes(of: getpid(), named: "store-writer")
        for batch in batches {
            guard case .success(let summary) = store.ingest(batch), summary.accepted == batch.count else {
                throw BenchError("stage profile: a batch was not stored whole")
            }
        }
        let storeSeconds = Stopwatch.cpu(CLOCK_PROCESS_CPUTIME_ID) - storeStart
        let writerSeconds = ThreadCPU.used(from: writerBefore, to: ThreadCPU.runtimes(of: getpid(), named: "store-writer"))
        let perEvent = 1e6 / Double(lines.count)
        return Figures(decode: decodeSeconds * perEvent, decodeSingle: singleSeconds * perEvent,
                       store: storeSeconds * perEvent, storeWriter: writerSeconds * perEvent)
    }

    /// CPU seconds to decode every event as its own `application/json` body (one object), as
    /// the single-event wrk script posts them. Only decoding is timed (the bodies are made
    /// first); a function of its own so that a profiler can be pointed at it
    /// (`valgrind --tool=callgrind --toggle-collect='*decodeSingles*'`).
    func decodeSingles() throws -> Double {
        let bodies = lines.map { Array($0.utf8) }
        let decoder = IngestDecoder()
        var decoded = 0
        let start = Stopwatch.cpu(CLOCK_THREAD_CPUTIME_ID)
        for body in bodies { decoded += try decoder.decode(body, format: .json).count }
        let seconds = Stopwatch.cpu(CLOCK_THREAD_CPUTIME_ID) - start
        guard decoded == lines.count else { throw BenchError("stage profile: \(decoded) of \(lines.count) single events decoded") }
        return seconds
    }
}
