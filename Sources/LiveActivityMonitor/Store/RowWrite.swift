import SQLiteDB

/// Which columns of an `activities` row a write sets: every one (an insert, or for a row already
/// there an update of every column but `number`, which its events are filed under), or an
/// update by its id that leaves the id, booking and start alone (they never change; SQLite
/// works on an index whenever one of its columns is assigned, even to the same value), sets
/// `dismissed_at` only when the dismissal changed (its index entries change), leaves a text
/// only the row holds (`ActivityRecord.textsInRow`) as stored, never nulled, and merges the
/// delivery evidence's known contents with the row's when memory holds only the ones since
/// (`DeliveryEvidence.knownInRow`, `DeliveryEvidence.mergeSQL`).
///
/// One rule for the statement and its binding: `sql` lists the columns `sets` admits, and
/// `ActivityRecord.bind(to:as:)` binds the same ones.
struct RowWrite: Hashable {
    /// Every column: a new row, or the row's every column but `number`.
    var insert: Bool
    /// An update sets `dismissed_at`.
    var setsDismissal: Bool
    /// Texts an update leaves as stored.
    var leaving: RecordTexts
    /// An update's `delivery` is the row's known contents and the record's tail, after the
    /// record's header (two values bound: `DeliveryEvidence.mergeSQL`).
    var mergesKnown = false

    static let whole = RowWrite(insert: true, setsDismissal: true, leaving: [])
    /// The update of a row whose dismissal did not change, its record holding both texts and
    /// all its known contents.
    static let update = RowWrite(insert: false, setsDismissal: false, leaving: [])

    /// The columns a write sets (bar the text columns an update leaves): the record's, which
    /// the PostgreSQL store shares (`ActivityRecord.columns`), then `held_record`, every write's.
    static let columns = ActivityRecord.columns + [ActivityRecord.heldRecordColumn]

    /// The text columns, by name.
    static let textColumns: [String: RecordTexts] = ["attributes": .attributes, "content_state": .contentState]
    private static let keys: Set = ["activity_id", "booking_id", "started_at"]

    /// Whether this write sets `column` (for the statement, made once per kind of write).
    func sets(_ column: String) -> Bool {
        if Self.keys.contains(column) { return setsKeys }
        if column == "dismissed_at" { return setsDismissedAt }
        if let text = Self.textColumns[column] { return sets(text) }
        return true
    }

    // The same rule without names, for binding each row: `sets(_:)` by name hashed a string per
    // column asked, a tenth of a row write's instructions (PERFORMANCE.md, session 21).

    /// Whether this write sets the id, booking and start: only an insert.
    var setsKeys: Bool { insert }
    /// Whether this write sets `dismissed_at`.
    var setsDismissedAt: Bool { insert || setsDismissal }
    /// Whether this write sets the column of `text` (one of `RecordTexts`).
    func sets(_ text: RecordTexts) -> Bool { insert || !leaving.contains(text) }

    /// How an update sets `column`: to the value bound, or `delivery` merged.
    private func assignment(_ column: String) -> String {
        column == "delivery" && mergesKnown ? "delivery = " + DeliveryEvidence.mergeSQL : column + " = ?"
    }

    /// The statement, made once per kind of write (`statements`).
    var sql: String { Self.statements[self]! }

    private static let statements: [RowWrite: String] = {
        var all: [RowWrite: String] = [
            // Not `INSERT OR REPLACE`: that deletes the row and inserts one under a new number.
            .whole: "INSERT INTO activities (" + columns.joined(separator: ", ") + ") VALUES ("
                + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ") ON CONFLICT (activity_id) DO UPDATE SET "
                + columns.filter { $0 != "activity_id" }.map { "\($0) = excluded.\($0)" }.joined(separator: ", "),
        ]
        for dismissal in [false, true] {
            for leaving in [[], RecordTexts.attributes, .contentState, .both] {
                for merges in [false, true] {
                    let write = RowWrite(insert: false, setsDismissal: dismissal, leaving: leaving, mergesKnown: merges)
                    all[write] = "UPDATE activities SET " + columns.filter(write.sets).map(write.assignment).joined(separator: ", ")
                        + " WHERE activity_id = ?"
                }
            }
        }
        return all
    }()
}

/// The writer's statements for one pass of row writes, one per kind of write met (each from
/// the connection's cache once).
struct RowStatements {
    private let db: Database
    private var statements: [RowWrite: Statement] = [:]

    init(_ db: Database) { self.db = db }

    mutating func write(_ record: ActivityRecord, _ write: RowWrite) throws {
        let statement: Statement
        if let known = statements[write] {
            statement = known
        } else {
            statement = try db.cached(write.sql)
            statements[write] = statement
        }
        try record.bind(to: statement, as: write)
        _ = try statement.step()
        statement.reset()
    }
}
