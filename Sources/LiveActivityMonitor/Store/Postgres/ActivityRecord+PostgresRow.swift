import JSON
import LiveActivityWire
import PostgresDB

/// How an `ActivityRecord` is kept in PostgreSQL's `activities` table: the SQLite row's
/// columns (`ActivityRecord.columns`), in the same order, as parameters and back.
extension ActivityRecord {
    /// Upserts a batch of records in one statement: one array parameter per column, read back
    /// as rows by `unnest` (so the statement's text, and its prepared plan, fit any batch).
    static let postgresUpsertSQL: String = {
        let types = postgresColumnTypes
        let arrays = types.enumerated().map { "$\($0.offset + 1)::\($0.element)[]" }.joined(separator: ", ")
        let updates = columns.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return "INSERT INTO activities (" + columns.joined(separator: ", ") + ") SELECT * FROM unnest(" + arrays + ")"
            + " ON CONFLICT (activity_id) DO UPDATE SET " + updates
    }()

    static let postgresSelectSQL = "SELECT " + columns.joined(separator: ", ") + " FROM activities"

    /// Each column's type, in `columns` order.
    static let postgresColumnTypes = [
        "text", "text", "text", "text", "text", "float8", "text",
        "text", "float8", "float8", "float8", "boolean",
        "boolean", "float8", "text", "text", "float8", "float8",
        "text", "bigint", "float8", "text",
        "bigint", "text", "float8", "bigint",
        "float8", "bytea", "bytea", "float8", "text",
        "float8", "text",
    ]

    /// The row's values, in `columns` order.
    var postgresValues: [PostgresValue] {
        [
            .text(activityID), PostgresValue(bookingID), .text(attributesType), PostgresValue(app), .text(source.rawValue),
            .real(startedAt), PostgresValue(attributes?.text),
            PostgresValue(contentState?.text), .real(contentTimestamp), PostgresValue(staleDate), PostgresValue(relevanceScore),
            .boolean(reportedStale),
            .boolean(staleCounted), PostgresValue(endedAt), PostgresValue(endedBy?.rawValue), PostgresValue(dismissalPolicy?.rawValue),
            PostgresValue(dismissalDate), PostgresValue(dismissedAt),
            PostgresValue(tokenFingerprint), .integer(Int64(tokenRotations)), PostgresValue(tokenRotatedAt),
            PostgresValue(tokenInvalidReason),
            PostgresValue(lastPush.map { Int64($0.status) }), PostgresValue(lastPush?.reason), PostgresValue(lastPush?.latencyMs),
            PostgresValue(lastPush.map { Int64($0.priority) }),
            PostgresValue(lastPush?.at), .bytes(priority10.blob), delivery.stored.map { .bytes($0) } ?? .null, PostgresValue(undecodable?.at),
            PostgresValue(undecodable?.detail),
            PostgresValue(startDate), PostgresValue(channelID),
        ]
    }

    /// Reads a row selected with `postgresSelectSQL`.
    init(postgresRow r: [PostgresValue]) {
        func text(_ i: Int) -> String? { r[i].textValue }
        func real(_ i: Int) -> Double? { r[i].doubleValue }
        func object(_ i: Int) -> JSONText? { text(i).map(JSONText.init(written:)) }
        self.init(activityID: text(0) ?? "", bookingID: text(1), attributesType: text(2) ?? "", app: text(3),
                  startedAt: real(5) ?? 0, source: StartSource(rawValue: text(4) ?? "") ?? .app)
        attributes = object(6)
        contentState = object(7)
        contentTimestamp = real(8) ?? 0
        staleDate = real(9)
        relevanceScore = real(10)
        reportedStale = r[11].boolValue ?? false
        staleCounted = r[12].boolValue ?? false
        endedAt = real(13)
        endedBy = text(14).flatMap(EndedBy.init(rawValue:))
        dismissalPolicy = text(15).flatMap(DismissalPolicy.init(rawValue:))
        dismissalDate = real(16)
        dismissedAt = real(17)
        tokenFingerprint = text(18)
        tokenRotations = Int(r[19].int64Value ?? 0)
        tokenRotatedAt = real(20)
        tokenInvalidReason = text(21)
        if let status = r[22].int64Value {
            lastPush = LastPush(status: Int(status), reason: text(23), latencyMs: real(24) ?? 0,
                                priority: Int(r[25].int64Value ?? 0), at: real(26) ?? 0)
        }
        priority10 = r[27].bytesValue.map(Priority10Minutes.init(blob:)) ?? Priority10Minutes()
        delivery = DeliveryEvidence(stored: r[28].bytesValue)
        if let detail = text(30) { undecodable = Undecodable(at: real(29) ?? 0, detail: detail) }
        startDate = real(31)
        channelID = text(32)
    }
}
