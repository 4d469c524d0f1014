import JSON

/// A content-state as the rules read it, before any state is consulted: parsed, and its digest
/// (`ContentDigest`). Made where an ingested event is decoded (`Event.readContent`, on an HTTP
/// polling thread or a decoding queue), so that the single writer only compares: it judges the
/// parsed value by the learned shape (`ContentShapes.verdict(on:of:)`) and compares digests.
/// Parsing each push's content on the writer had been the largest part of the engine's own
/// work there (PERFORMANCE.md, session 18). An event that carries none (a replay, the demo, an
/// in-process caller) is read by the engine itself, the same way (`Event.readContentState`).
struct ContentReading: Sendable {
    /// nil: the text does not parse (stored text always does).
    let value: JSONValue?
    /// `ContentDigest` of `value`; nil when it does not parse.
    let digest: UInt64?
    /// `ContentStructure` of `value`, what its verdict depends on; nil when it does not parse.
    let structure: [UInt8]?
    /// The heap `value` holds (`heapBytes(of:)`): a queued event's reading counts in the
    /// in-flight budget beside its body's bytes (`IngestHandler`).
    let heapBytes: Int

    init(_ text: JSONText) {
        value = try? JSONParser.parse(text.text)
        digest = value.map(ContentDigest.of)
        structure = value.map(ContentStructure.of)
        heapBytes = (value.map(Self.heapBytes) ?? 0) + (structure.map { Self.allocation(32 + $0.capacity) } ?? 0)
    }

    /// The heap a parsed value holds, as glibc's allocator hands it out: an array's or object's
    /// storage, each string past the 15 bytes Swift keeps inline (keys and number literals too),
    /// and the key index of an object over `JSONObject.indexThreshold` keys. About 3 × the text
    /// for a typical content (PERFORMANCE.md, session 19); small members cost more than their
    /// text, long strings about as much.
    static func heapBytes(of value: JSONValue) -> Int {
        switch value {
        case .null, .bool: return 0
        case .number(let number): return stringBytes(number.literal)
        case .string(let string): return stringBytes(string)
        case .array(let values):
            return values.reduce(values.isEmpty ? 0 : allocation(32 + values.count * MemoryLayout<JSONValue>.stride)) {
                $0 + heapBytes(of: $1)
            }
        case .object(let object):
            let count = object.count
            var bytes = count == 0 ? 0 : allocation(32 + count * MemoryLayout<JSONObject.Element>.stride)
            // The index: a dictionary of key and position, at most 3/4 full.
            if count > JSONObject.indexThreshold { bytes += allocation(64 + count * 4 / 3 * (MemoryLayout<String>.stride + 8 + 1)) }
            for (key, member) in object { bytes += stringBytes(key) + heapBytes(of: member) }
            return bytes
        }
    }

    private static func stringBytes(_ string: String) -> Int {
        let count = string.utf8.count
        return count <= 15 ? 0 : allocation(32 + count + 1)
    }

    /// A malloc chunk: the request and 8 bytes of header, in 16-byte steps, 32 at least.
    private static func allocation(_ bytes: Int) -> Int {
        max(32, (bytes + 8 + 15) & ~15)
    }
}

extension Event {
    /// Reads `contentState` now, off the writer (the decoder calls it on every event it makes).
    /// The content must not change afterwards.
    mutating func readContent() {
        contentReading = contentState.map(ContentReading.init)
    }

    /// The content as read where the event was decoded, else read now; nil without content.
    var readContentState: ContentReading? {
        contentReading ?? contentState.map(ContentReading.init)
    }

    /// The content's `ContentDigest` (`readContentState`'s), without copying the reading held.
    var contentDigest: UInt64? {
        contentReading != nil ? contentReading?.digest : readContentState?.digest
    }
}
