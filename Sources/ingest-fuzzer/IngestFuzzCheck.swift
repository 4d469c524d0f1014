import JSON
import LiveActivityMonitor
import LiveActivityWire

/// What must hold for any byte string sent to `POST /v1/events`, checked by traps so that
/// libFuzzer reports a violation as a crash:
/// - the decoder's cheap event count equals what the parser finds, on any valid input;
/// - the decoder never crashes, and answers either events or a 4xx ``APIError`` whose body is
///   JSON with nothing that HTML could read (`<`, `>`, `&` are escaped);
/// - every value the JSON parser accepts is written back by `JSONWriter` to text that parses to
///   an equal value, and that text is HTML-safe;
/// - every accepted event has its dates inside the validator's windows, formats them back to
///   RFC 3339 that parses again, and keeps no raw `push_token` in its stored document;
/// - whenever the one-object `push.sent` fast path takes a body, the parser and validator take
///   it too and make exactly the same event (every field, the stored body byte for byte), with
///   the default limits and with tight ones; an NDJSON body, whose push lines it reads, decodes
///   to the same events or the same error as without it;
/// - the same bytes as a stored series key reach `/metrics` without a trap (`SeriesFuzzCheck`).
enum IngestFuzzCheck {
    static let decoder = IngestDecoder()
    /// Pairs of decoders with the same limits: the first may take the fast path, the second
    /// never does. Tight limits make the fast path's limit checks matter on small inputs.
    static let pairs: [(fast: IngestDecoder, tree: IngestDecoder)] = {
        var tight = JSONParser.Limits()
        tight.maxDepth = 3
        tight.maxStringBytes = 40
        tight.maxNumberLength = 12
        tight.maxContainerCount = 12
        return [JSONParser.Limits(), tight].map { limits in
            var fast = IngestDecoder()
            fast.limits = limits
            var tree = fast
            tree.fastPath = false
            return (fast, tree)
        }
    }()
    /// The schema's date window (`EventSchema.dateWindow`: 2000-01-01 … 2100-01-01), written
    /// again here: an oracle of its own, not the code under test.
    static let dates = 946_684_800.0..<4_102_444_800.0
    /// The window of the dates a push or a device reports (`EventSchema.valueWindow`): any
    /// number of seconds that has milliseconds as a 64-bit integer.
    static let valueDates = -9e15..<9e15
    static let htmlSpecial: Set<UInt8> = [UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&")]

    /// Valid push bodies with a hole for the input: as `content_state`, as further members, as
    /// the members after the required ones but `activity_id` and `occurred_at`. Most inputs
    /// make no valid body on their own; spliced in, they reach the fast path's acceptance far
    /// more often, so that its comparison with the tree decoder is exercised.
    static let embeddings: [(prefix: [UInt8], suffix: [UInt8])] = {
        let required = #"{"type":"push.sent","event":"update","status":200,"latency_ms":1,"push_token":"0123456789abcdef0123456789abcdef","#
        let complete = required + #""activity_id":"a","occurred_at":1800000000"#
        return [(complete + #","content_state":"#, "}"), (complete + ",", "}"), (required, "}")]
            .map { (Array($0.utf8), Array($1.utf8)) }
    }()

    /// Returns how many checks of the fast path it took (for the replay's summary).
    @discardableResult
    static func run(_ bytes: [UInt8]) -> Int {
        var taken = compareFastPath(bytes)
        for (prefix, suffix) in embeddings { taken += compareFastPath(prefix + bytes + suffix) }
        // One batch: the input as a line of its own, then spliced into each valid body.
        compareBatch(Array(([bytes] + embeddings.map { $0.prefix + bytes + $0.suffix }).joined(separator: [UInt8(ascii: "\n")])))
        // The pre-parse event count must agree with the parser on valid input, or a valid
        // request could be refused (413) or a too-large one parsed.
        if let value = try? JSONParser.parse(bytes) {
            roundTrip(value)
            let expected: Int
            if case .array(let items) = value { expected = items.count } else { expected = 1 }
            let counted = IngestDecoder.topLevelCount(bytes, format: .json)
            require(counted == expected, "JSON count \(counted), parser found \(expected)")
        }
        let lines = JSONParser.parseLines(bytes)
        if lines.allSatisfy({ if case .success = $0.result { true } else { false } }) {
            let counted = IngestDecoder.topLevelCount(bytes, format: .ndjson)
            require(counted == lines.count, "NDJSON count \(counted), parser found \(lines.count) lines")
        }
        for format in [IngestDecoder.Format.json, .ndjson] {
            do {
                let events = try decoder.decode(bytes, format: format)
                require(!events.isEmpty && events.count <= decoder.maxEvents, "accepted \(events.count) events")
                events.forEach(check)
            } catch {
                check(error)
            }
        }
        SeriesFuzzCheck.run(bytes)
        return taken
    }

    /// Whenever the fast path takes `bytes`, the tree decoder (same limits) must make exactly the
    /// same single event. Returns how many decoder pairs took the fast path.
    static func compareFastPath(_ bytes: [UInt8]) -> Int {
        var taken = 0
        for (fastDecoder, treeDecoder) in pairs {
            guard let fast = fastDecoder.fastPushEvent(bytes) else { continue }
            taken += 1
            let tree: [Event]
            do { tree = try treeDecoder.decode(bytes, format: .json) } catch {
                fail("the fast path took a body the decoder refuses (\(error)): \(String(decoding: bytes.prefix(300), as: UTF8.self))")
            }
            require(tree.count == 1, "the fast path made one event, the decoder \(tree.count)")
            let differences = fast.differences(from: tree[0])
            require(differences.isEmpty, "the fast path's event differs in \(differences): \(String(decoding: bytes.prefix(300), as: UTF8.self))")
            check(fast)
        }
        return taken
    }

    /// The fast path reads an NDJSON body's push lines too: the whole body must decode exactly
    /// as the tree decoder decodes it, to the same events or the same error. (Each line's own
    /// reading is `compareFastPath`'s, under both limits; this checks the batch around it.)
    static func compareBatch(_ bytes: [UInt8]) {
        let (fastDecoder, treeDecoder) = pairs[0]   // the default limits
        let fast = Result { () throws(APIError) -> [Event] in try fastDecoder.decode(bytes, format: .ndjson) }
        let tree = Result { () throws(APIError) -> [Event] in try treeDecoder.decode(bytes, format: .ndjson) }
        switch (fast, tree) {
        case (.success(let a), .success(let b)):
            require(a.count == b.count && zip(a, b).allSatisfy { $0.differences(from: $1).isEmpty },
                    "an NDJSON body decodes otherwise with the fast path: \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        case (.failure(let a), .failure(let b)):
            require(a == b, "an NDJSON body is answered \(a) with the fast path, \(b) without")
        default:
            fail("an NDJSON body is answered \(fast) with the fast path, \(tree) without")
        }
    }

    static func roundTrip(_ value: JSONValue) {
        let written = value.jsonBytes
        require(!written.contains(where: htmlSpecial.contains), "writer output is not HTML-safe")
        guard let again = try? JSONParser.parse(written) else {
            fail("writer output does not parse: \(String(decoding: written.prefix(200), as: UTF8.self))")
        }
        require(again == value, "round trip changed the value")
    }

    static func check(_ event: Event) {
        require(dates.contains(event.occurredAt), "occurred_at \(event.occurredAt) accepted outside the window")
        if let start = event.startDate { require(dates.contains(start), "start_date \(start) accepted outside the window") }
        for (name, seconds) in [("occurred_at", event.occurredAt), ("timestamp", event.timestamp)]
            + [("stale_date", event.staleDate), ("dismissal_date", event.dismissalDate)].compactMap({ n, s in s.map { (n, $0) } }) {
            require(valueDates.contains(seconds), "\(name) \(seconds) accepted outside the window")
            // Stored as its number where RFC 3339 has no form for it (years 0000–9999).
            guard (-62_167_219_200.0..<253_402_300_800.0).contains(seconds) else { continue }
            guard let parsed = RFC3339.parse(RFC3339.format(seconds)) else { fail("\(name) \(seconds) does not format to RFC 3339") }
            require(abs(parsed - seconds) <= 0.0005 + 1e-6, "\(name) \(seconds) formats back as \(parsed)")
        }
        guard case .object(let stored)? = try? JSONParser.parse(event.body) else { fail("stored body is not a JSON object") }
        require(stored["push_token"] == nil, "raw push_token kept in the stored document")
        if let fingerprint = event.tokenFingerprint {
            require(fingerprint.utf8.count == 16 && fingerprint.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) },
                    "bad fingerprint \(fingerprint)")
        }
        roundTrip(.object(stored))
    }

    static func check(_ error: APIError) {
        require((400..<500).contains(error.status), "status \(error.status) for bad input")
        let body = error.response.body
        require(!body.contains(where: htmlSpecial.contains), "error body is not HTML-safe")
        guard case .object? = try? JSONParser.parse(body) else { fail("error body is not a JSON object") }
    }

    static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fail(message()) }
    }

    static func fail(_ message: String) -> Never {
        fatalError("ingest invariant violated: \(message)")
    }
}
