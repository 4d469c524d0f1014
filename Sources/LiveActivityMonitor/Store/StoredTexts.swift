import JSON
import SQLiteDB
import Prometheus

/// An activity's two JSON texts as its row holds them, for a record that left them there
/// (`ActivityRecord.textsInRow`).
struct StoredTexts: Sendable {
    var attributes: JSONText?
    var contentState: JSONText?
}

extension EventStore {
    /// The stored texts of `ids` (those with a row), in one statement: the ids go in bound, as
    /// one JSON array, whatever their number.
    static func texts(of ids: [String], _ db: Database) throws -> [ExactString: StoredTexts] {
        let s = try db.cached("""
            SELECT activity_id, attributes, content_state FROM activities
            WHERE activity_id IN (SELECT value FROM json_each(?1))
            """)
        defer { s.reset() }
        try s.bind(JSONValue.array(ids.map { .string($0) }).jsonString, at: 1)
        var found: [ExactString: StoredTexts] = [:]
        found.reserveCapacity(ids.count)
        // Written from `JSONText` (`ActivityRecord.bind`), so read back as such without parsing.
        while try s.step() {
            found[ExactString(s.text(0) ?? "")] = StoredTexts(attributes: s.text(1).map(JSONText.init(written:)),
                                                 contentState: s.text(2).map(JSONText.init(written:)))
        }
        return found
    }

    /// Fills the texts of the records that left them to their rows, from the rows, on a read
    /// connection: one statement for them all. A record copied from memory with its texts let
    /// go had its row committed before (memory lets them go only after the commit that wrote
    /// it), so the row has them; it may be newer by the commits since the copy (docs/ARCHITECTURE.md,
    /// "What one record costs").
    func fillTexts(_ records: inout [ActivityRecord]) throws {
        let wanted = records.indices.filter { !records[$0].textsInRow.isEmpty }
        guard !wanted.isEmpty else { return }
        let ids = wanted.map { records[$0].activityID }
        let stored = try readers.read { try Self.texts(of: ids, $0) }
        for i in wanted {
            let texts = stored[ExactString(records[i].activityID)]
            records[i].fillTexts(attributes: texts?.attributes, contentState: texts?.contentState)
        }
    }
}
