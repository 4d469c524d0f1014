import JSON

/// Turns an ingest request body into validated events: JSON (one object or an array) or NDJSON.
/// Either every event is valid, or the error names every invalid one.
public struct IngestDecoder: Sendable {
    public var maxEvents = 1000
    public var limits = JSONParser.Limits()
    /// Whether a body that is one `push.sent` object goes the one-pass way (`fastPushEvent`);
    /// false sends every body through the parser and validator (to compare the two).
    public var fastPath = true

    public init() {}

    public enum Format: Sendable { case json, ndjson }

    /// The body format for a Content-Type header, or nil when it is not one we take.
    public static func format(contentType: String?) -> Format? {
        guard var contentType else { return nil }
        // The media type: the bytes before any parameter, without blanks, in any case. Compared
        // over the header's contiguous bytes: splitting, trimming and lowercasing Strings cost a
        // microsecond a request, and comparing through `String.UTF8View` indices a few thousand
        // instructions (callgrind).
        return contentType.withUTF8 { header -> Format? in
            let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            var start = 0, end = header.firstIndex(of: UInt8(ascii: ";")) ?? header.count
            while start < end, isBlank(header[start]) { start += 1 }
            while end > start, isBlank(header[end - 1]) { end -= 1 }
            let mediaType = header[start..<end]
            func matches(_ name: StaticString) -> Bool {
                let lower = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
                return mediaType.elementsEqual(lower) { byte, lower in
                    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 == lower : byte == lower
                }
            }
            let format: Format? = matches("application/json") ? .json
                : matches("application/x-ndjson") || matches("application/ndjson") || matches("application/jsonl") ? .ndjson : nil
            guard let format, end < header.count else { return format }
            // Parameters are rare: read as text. JSON is UTF-8 (RFC 8259): a body declared in
            // another charset would be read as other text than the client meant.
            return Self.declaresOnlyUTF8(String(decoding: header[(end + 1)...], as: UTF8.self)) ? format : nil
        }
    }

    /// Whether the parameters after a media type (`a=b; charset=utf-8`) name no charset but UTF-8.
    private static func declaresOnlyUTF8(_ parameters: String) -> Bool {
        parameters.split(separator: ";").allSatisfy { parameter in
            let parts = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.first?.lowercased() == "charset" else { return true }
            let value = parts.count > 1 ? parts[1] : ""
            let unquoted = value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") ? String(value.dropFirst().dropLast()) : value
            return unquoted.lowercased() == "utf-8"
        }
    }

    /// `firstLine` numbers an NDJSON body's first line in error messages (`import` decodes a
    /// file in parts and names lines as the file numbers them).
    /// Each event's content is read here too (`Event.readContent`): parsed and digested on the
    /// decoding thread, so that the store's single writer only compares.
    public func decode(_ body: [UInt8], format: Format, firstLine: Int = 1) throws(APIError) -> [Event] {
        var events = try validated(body, format: format, firstLine: firstLine)
        for i in events.indices { events[i].readContent() }
        return events
    }

    private func validated(_ body: [UInt8], format: Format, firstLine: Int) throws(APIError) -> [Event] {
        // One push.sent object (a backend reporting one APNs result) is read in one pass when
        // the fast path is sure of it; anything else, errors included, goes the general way.
        if fastPath, format == .json, let event = fastPushEvent(body) { return [event] }
        // Count before parsing: a body of 300,000 `{}` is refused as too many events (413)
        // without building 300,000 values first.
        let count = Self.topLevelCount(body, format: format)
        guard count <= maxEvents else {
            throw .payloadTooLarge("\(count) events in one request; at most \(maxEvents)")
        }
        let items = try items(of: body, format: format, firstLine: firstLine)
        guard !items.isEmpty else { throw .badRequest("the request holds no events") }
        var events: [Event] = []
        events.reserveCapacity(items.count)
        var errors: [FieldError] = []
        for (index, item) in items.enumerated() {
            switch item {
            case .read(let event): events.append(event)
            case .parsed(let value):
                switch EventValidator.validate(value, index: index) {
                case .valid(let event): events.append(event)
                case .invalid(let problems): errors += problems
                }
            }
        }
        guard errors.isEmpty else { throw .invalidEvents(errors) }
        return events
    }

    /// One event of a body as parsing leaves it: read whole by the fast path, or a value still
    /// to validate.
    enum Item {
        case read(Event)
        case parsed(JSONValue)
    }

    /// The event of a body that is one `push.sent` object (alone or as an array's only element), read in one pass without building a
    /// JSON tree (PushEventScanner), or nil when that fast path is not sure; then `decode`
    /// parses and validates as for any body, which makes the same event or the real errors.
    /// Public so that tests and the fuzzer can tell which way a body went and compare the two.
    public func fastPushEvent(_ body: [UInt8]) -> Event? {
        // The body counts as one event: where not even one is allowed, the general way says so.
        guard maxEvents >= 1 else { return nil }
        // Our reporter and many clients send an array even for one event: `[` … `]` around the
        // object (blanks allowed) is the same event one level deeper.
        if let first = body.firstIndex(where: { !Self.isBlank($0) }), body[first] == UInt8(ascii: "["),
           let last = body.lastIndex(where: { !Self.isBlank($0) }), last > first, body[last] == UInt8(ascii: "]") {
            var inner = limits
            inner.maxDepth -= 1
            return PushEventScanner.event(in: body[(first + 1)..<last], limits: inner)
        }
        return PushEventScanner.event(in: body[...], limits: limits)
    }

    /// The body's events, parsed (internal for the tests, which check which way each went).
    func items(of body: [UInt8], format: Format, firstLine: Int = 1) throws(APIError) -> [Item] {
        switch format {
        case .json:
            let value: JSONValue
            // The parser's message already names the line and column.
            do { value = try JSONParser.parse(body, limits: limits) } catch {
                throw .badRequest("body is not valid JSON: \(error.message)")
            }
            if case .array(let items) = value { return items.map(Item.parsed) }
            return [.parsed(value)]
        case .ndjson:
            // Each line that is one push.sent object the fast path is sure of is read by it
            // (a batch of APNs results is mostly such lines); the parser gets the rest.
            var read: [Event] = []
            let lines = body.withUnsafeBytes { bytes in
                JSONParser.parseLines(bytes, limits: limits, firstLine: firstLine) { line in
                    guard fastPath, let event = PushEventScanner.event(in: body[line], limits: limits) else { return false }
                    read.append(event)
                    return true
                }
            }
            var items: [Item] = []
            items.reserveCapacity(lines.count)
            var nextRead = read.makeIterator()
            for (line, result) in lines {
                switch result {
                case nil: items.append(.read(nextRead.next()!))
                case .success(let value): items.append(.parsed(value))
                case .failure(let error):
                    throw .badRequest("line \(line) is not valid JSON: \(error.message)")
                }
            }
            return items
        }
    }

    /// JSON's whitespace: space, tab, line feed, carriage return.
    static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// How many events a body holds, by a scan that builds nothing: the elements of a
    /// top-level JSON array (1 for any other JSON value), or the non-blank NDJSON lines. On
    /// valid input it equals the number of values parsing yields; on malformed input it is
    /// an estimate (the parser then reports the error).
    public static func topLevelCount(_ body: [UInt8], format: Format) -> Int {
        let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t"), cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
        switch format {
        case .ndjson:
            var lines = 0, blank = true
            for byte in body {
                if byte == lf {
                    if !blank { lines += 1 }
                    blank = true
                } else if byte != space, byte != tab, byte != cr {
                    blank = false
                }
            }
            return blank ? lines : lines + 1
        case .json:
            guard let first = body.firstIndex(where: { !isBlank($0) }) else { return 0 }
            guard body[first] == UInt8(ascii: "[") else { return 1 }
            var depth = 0, commas = 0, empty = true, inString = false, escaped = false
            for byte in body[(first + 1)...] {
                if inString {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                    continue
                }
                switch byte {
                case space, tab, cr, lf: continue
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    if depth == 0 { return empty ? 0 : commas + 1 }
                    depth -= 1
                case UInt8(ascii: ","): if depth == 0 { commas += 1 }
                default: break
                }
                empty = false
            }
            return empty ? 0 : commas + 1
        }
    }
}
