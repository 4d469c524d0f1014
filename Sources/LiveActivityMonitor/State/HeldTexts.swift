import JSON

/// The two texts a record holds in memory (`attributes`, then `contentState`), joined in one
/// string, in a block of their own: 8 bytes in the record where two optional texts took 32, and
/// none of it once its row holds them (`ActivityRecord.leaveToRow`, what most live records do).
/// While both are held, the joined string costs one heap block where the two texts took two,
/// so a store that keeps them (PostgreSQL) pays about what it did. A text is never empty (it is
/// JSON), so an empty part is one not held. Immutable, as the record's other blocks: a change
/// makes a new one (a new content, with the attributes in the row, keeps its own string).
final class HeldTexts: Sendable, Equatable {
    private let joined: String
    /// The attributes' bytes at the start of `joined`.
    private let attributesCount: Int32

    /// Nil when both are nil.
    static func of(attributes: JSONText?, contentState: JSONText?) -> HeldTexts? {
        let attributes = attributes?.text ?? "", content = contentState?.text ?? ""
        if attributes.isEmpty && content.isEmpty { return nil }
        return HeldTexts(attributes.isEmpty ? content : content.isEmpty ? attributes : attributes + content,
                         attributesCount: Int32(attributes.utf8.count))
    }

    private init(_ joined: String, attributesCount: Int32) {
        self.joined = joined
        self.attributesCount = attributesCount
    }

    var attributes: JSONText? { part(0, Int(attributesCount)) }
    var contentState: JSONText? { part(Int(attributesCount), joined.utf8.count) }

    /// The bytes `start..<end` of `joined`: `joined` itself when they are all of it.
    private func part(_ start: Int, _ end: Int) -> JSONText? {
        if start == end { return nil }
        if start == 0 && end == joined.utf8.count { return JSONText(written: joined) }
        let utf8 = joined.utf8
        let from = utf8.index(utf8.startIndex, offsetBy: start), to = utf8.index(utf8.startIndex, offsetBy: end)
        return JSONText(written: String(decoding: utf8[from..<to], as: UTF8.self))
    }

    /// As the two texts compared before they were joined (where one ends is the same).
    static func == (a: HeldTexts, b: HeldTexts) -> Bool {
        a === b || (a.attributesCount == b.attributesCount && a.joined == b.joined)
    }
}
