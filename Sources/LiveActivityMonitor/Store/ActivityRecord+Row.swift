import JSON
import LiveActivityWire
import SQLiteDB

/// How an `ActivityRecord` is kept in the `activities` table.
extension ActivityRecord {
    static let columns = [
        "activity_id", "booking_id", "attributes_type", "app", "source", "started_at", "attributes",
        "content_state", "content_timestamp", "stale_date", "relevance_score", "reported_stale",
        "stale_counted", "ended_at", "ended_by", "dismissal_policy", "dismissal_date", "dismissed_at",
        "token_fingerprint", "token_rotations", "token_rotated_at", "token_invalid_reason",
        "last_push_status", "last_push_reason", "last_push_latency_ms", "last_push_priority",
        "last_push_at", "priority10_times", "delivery", "undecodable_at", "undecodable_detail",
        "start_date", "channel_id",
    ]
    static let selectSQL = "SELECT " + columns.joined(separator: ", ") + " FROM activities"
    static let upsertSQL = "INSERT OR REPLACE INTO activities (" + columns.joined(separator: ", ") + ") VALUES ("
        + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"

    /// Rewrites a stored row in place, for a record whose dismissal did not change. Unlike
    /// `INSERT OR REPLACE` (a delete and an insert, each through the primary key and every index),
    /// it leaves the index entries alone: an activity's id, booking and start never change, and
    /// SQLite works on an index whenever one of its columns is assigned, even to the same value
    /// (setting `dismissed_at` dirtied a page of `activities_live` in nearly every commit).
    static let updateSQL = "UPDATE activities SET "
        + columns.filter { !unchangedByUpdate.contains($0) }.map { "\($0) = ?" }.joined(separator: ", ")
        + " WHERE activity_id = ?"
    static let unchangedByUpdate: Set = ["activity_id", "booking_id", "started_at", "dismissed_at"]

    /// Binds every column for `upsertSQL`, or (`update`) every column but `unchangedByUpdate`
    /// and then the key, for `updateSQL`.
    func bind(to s: Statement, update: Bool = false) throws {
        var i: Int32 = 0
        func next() -> Int32 { i += 1; return i }
        if !update {
            try s.bind(activityID, at: next())
            try s.bind(bookingID, at: next())
        }
        try s.bind(attributesType, at: next())
        try s.bind(app, at: next())
        try s.bind(source.rawValue, at: next())
        if !update { try s.bind(startedAt, at: next()) }
        try s.bind(attributes?.text, at: next())
        try s.bind(contentState?.text, at: next())
        try s.bind(contentTimestamp, at: next())
        try s.bindOptional(staleDate, at: next())
        try s.bindOptional(relevanceScore, at: next())
        try s.bind(Int64(reportedStale ? 1 : 0), at: next())
        try s.bind(Int64(staleCounted ? 1 : 0), at: next())
        try s.bindOptional(endedAt, at: next())
        try s.bind(endedBy?.rawValue, at: next())
        try s.bind(dismissalPolicy?.rawValue, at: next())
        try s.bindOptional(dismissalDate, at: next())
        if !update { try s.bindOptional(dismissedAt, at: next()) }
        try s.bind(tokenFingerprint, at: next())
        try s.bind(Int64(tokenRotations), at: next())
        try s.bindOptional(tokenRotatedAt, at: next())
        try s.bind(tokenInvalidReason, at: next())
        try s.bindOptional(lastPush.map { Int64($0.status) }, at: next())
        try s.bind(lastPush?.reason, at: next())
        try s.bindOptional(lastPush?.latencyMs, at: next())
        try s.bindOptional(lastPush.map { Int64($0.priority) }, at: next())
        try s.bindOptional(lastPush?.at, at: next())
        try s.bind(priority10.blob, at: next())
        try s.bind(delivery.stored, at: next())
        try s.bindOptional(undecodable?.at, at: next())
        try s.bind(undecodable?.detail, at: next())
        try s.bindOptional(startDate, at: next())
        try s.bind(channelID, at: next())
        if update { try s.bind(activityID, at: next()) }
    }

    /// Reads a row selected with `selectSQL`.
    init(row s: Statement) throws {
        var recent = RecentStrings()
        try self.init(row: s, sharing: &recent)
    }

    /// Reads a row selected with `selectSQL`, its attributes type and app shared through `recent`
    /// with the rows read before it (no copy made when one of those has the same bytes). The
    /// blobs and the fingerprint are decoded from the row's bytes in place, and the fields most
    /// rows leave null are not assigned (start-up reads a million rows so).
    init(row s: Statement, sharing recent: inout RecentStrings) throws {
        // Written from `JSONText` (`bind`), so read back as such without parsing.
        func object(_ column: Int32) -> JSONText? { s.text(column).map(JSONText.init(written:)) }
        func real(_ column: Int32) -> Double? { s.isNull(column) ? nil : s.double(column) }
        func shared(_ column: Int32) -> String? { s.withBytes(column) { $0.map { recent.shared(utf8: $0) } } }
        self.init(activityID: s.text(0) ?? "", bookingID: s.text(1), attributesType: shared(2) ?? "",
                  startedAt: s.double(5), source: StartSource(rawValue: s.text(4) ?? "") ?? .app)
        app = shared(3)
        attributes = object(6)
        contentState = object(7)
        contentTimestamp = s.double(8)
        staleDate = real(9)
        relevanceScore = real(10)
        reportedStale = s.int64(11) != 0
        staleCounted = s.int64(12) != 0
        endedAt = real(13)
        endedBy = s.text(14).flatMap(EndedBy.init(rawValue:))
        dismissalPolicy = s.text(15).flatMap(DismissalPolicy.init(rawValue:))
        // The uncommon fields, set only when there: each set makes and compares their block.
        if let date = real(16) { dismissalDate = date }
        if let at = real(17) { dismissedAt = at }
        storedFingerprint = s.withBytes(18) { $0.map(TokenFingerprint.Stored.init(utf8:)) }
        tokenRotations = Int(s.int64(19))
        tokenRotatedAt = real(20)
        if let reason = s.text(21) { tokenInvalidReason = reason }
        if !s.isNull(22) {
            lastPush = LastPush(status: Int(s.int64(22)), reason: s.text(23), latencyMs: s.double(24),
                                priority: Int(s.int64(25)), at: s.double(26))
        }
        // Its storage class read first: reading the bytes may convert a number to text.
        priority10 = if s.isBlob(27) {
            s.withBytes(27) { $0.map(Priority10Minutes.init(blob:)) } ?? Priority10Minutes()
        } else if s.isText(27), let text = s.text(27) {
            Priority10Minutes(text: text)
        } else {
            Priority10Minutes()
        }
        delivery = s.withBytes(28) { DeliveryEvidence(stored: $0) }
        if let detail = s.text(30) { undecodable = Undecodable(at: s.double(29), detail: detail) }
        if let date = real(31) { startDate = date }
        if let channel = s.text(32) { channelID = channel }
    }
}

extension Statement {
    func bindOptional(_ value: Double?, at index: Int32) throws {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    func bindOptional(_ value: Int64?, at index: Int32) throws {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }
}
