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

    init(_ text: JSONText) {
        value = try? JSONParser.parse(text.text)
        digest = value.map(ContentDigest.of)
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
}
