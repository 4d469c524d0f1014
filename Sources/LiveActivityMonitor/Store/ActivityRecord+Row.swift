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
    /// SQLite's row only: the record as start-up reads it back (`heldRecord`), after `columns`.
    static let heldRecordColumn = "held_record"
    static let selectSQL = "SELECT " + columns.joined(separator: ", ") + " FROM activities"
    /// The same columns as memory holds them, for the rows that start-up and the writer read,
    /// whose records leave to their rows what only the rows need (`leaveToRow`): the two texts
    /// left out (read as null), the delivery evidence's header without its known contents.
    static let selectHeldSQL = "SELECT " + heldColumnsSQL + " FROM activities"
    /// `selectHeldSQL`'s list of columns.
    static let heldColumnsSQL = columns.map { column in
        if RowWrite.textColumns[column] != nil { return "NULL" }
        return column == "delivery" ? DeliveryEvidence.headSQL : column
    }.joined(separator: ", ")

    /// Binds the columns `write` sets, in `RowWrite.columns` order, and for an update then the key
    /// (`RowWrite.sql`).
    func bind(to s: Statement, as write: RowWrite) throws {
        var i: Int32 = 0
        func next() -> Int32 { i += 1; return i }
        if write.setsKeys { try s.bind(activityID, at: next()) }
        if write.setsKeys { try s.bind(bookingID, at: next()) }
        try s.bind(attributesType, at: next())
        try s.bind(app, at: next())
        try s.bind(source.rawValue, at: next())
        if write.setsKeys { try s.bind(startedAt, at: next()) }
        if write.sets(.attributes) { try s.bind(attributes?.text, at: next()) }
        if write.sets(.contentState) { try s.bind(contentState?.text, at: next()) }
        try s.bind(contentTimestamp, at: next())
        try s.bindOptional(staleDate, at: next())
        try s.bindOptional(relevanceScore, at: next())
        try s.bind(Int64(reportedStale ? 1 : 0), at: next())
        try s.bind(Int64(staleCounted ? 1 : 0), at: next())
        try s.bindOptional(endedAt, at: next())
        try s.bind(endedBy?.rawValue, at: next())
        try s.bind(dismissalPolicy?.rawValue, at: next())
        try s.bindOptional(dismissalDate, at: next())
        if write.setsDismissedAt { try s.bindOptional(dismissedAt, at: next()) }
        try s.bind(tokenFingerprint, at: next())
        try s.bind(Int64(tokenRotations), at: next())
        try s.bindOptional(tokenRotatedAt, at: next())
        try s.bind(tokenInvalidReason, at: next())
        try s.bindOptional(lastPush.map { Int64($0.status) }, at: next())
        try s.bind(lastPush?.reason, at: next())
        try s.bindOptional(lastPush?.latencyMs, at: next())
        try s.bindOptional(lastPush.map { Int64($0.priority) }, at: next())
        try s.bindOptional(lastPush?.at, at: next())
        let priority10Blob = priority10.blob
        try s.bind(priority10Blob, at: next())
        if write.mergesKnown {
            try s.bind(delivery.storedHead, at: next())
            try s.bind(delivery.storedEntries, at: next())
        } else {
            try s.bind(delivery.stored, at: next())
        }
        try s.bindOptional(undecodable?.at, at: next())
        try s.bind(undecodable?.detail, at: next())
        try s.bindOptional(startDate, at: next())
        try s.bind(channelID, at: next())
        // Start-up reads live rows only (`LiveRowRanges`): a dismissed one keeps no copy.
        try s.bind(dismissedAt == nil ? heldRecord(priority10Blob: priority10Blob) : nil, at: next())
        if !write.insert { try s.bind(activityID, at: next()) }
    }

    /// How its row is written: whole for a new activity, else an update that sets its dismissal
    /// when `dismissalChanged` (its index entries change), never a text only its row holds, and
    /// the delivery's known contents merged with the row's when it holds only a tail.
    func rowWrite(dismissalChanged: Bool) -> RowWrite {
        // A new activity's record holds its texts (made by this commit); an update of a known
        // one that let its texts go must not null them (a whole write would).
        if dismissalChanged, textsInRow.isEmpty, !delivery.knownInRow { return .whole }
        return RowWrite(insert: false, setsDismissal: dismissalChanged, leaving: textsInRow,
                        mergesKnown: delivery.knownInRow)
    }

    /// Reads a row selected with `selectSQL`, or (`heldOnly`) with `selectHeldSQL`:
    /// its record leaves to the row what `leaveToRow` does.
    init(row s: Statement, heldOnly: Bool = false) throws(SQLiteError) {
        var recent = RecentStrings()
        try self.init(row: s, sharing: &recent, heldOnly: heldOnly)
    }

    /// Reads a row selected with `selectSQL`, its attributes type and app shared through `recent`
    /// with the rows read before it (no copy made when one of those has the same bytes; one
    /// block, `TypeAndApp`, for each pair). The
    /// blobs and the fingerprint are decoded from the row's bytes in place, and the fields most
    /// rows leave null are not assigned (start-up reads a million rows so).
    init(row s: Statement, sharing recent: inout RecentStrings, heldOnly: Bool = false) throws(SQLiteError) {
        // Written from `JSONText` (`bind`), so read back as such without parsing.
        func object(_ column: Int32) -> JSONText? { s.text(column).map(JSONText.init(written:)) }
        func real(_ column: Int32) -> Double? { s.isNull(column) ? nil : s.double(column) }
        func shared(_ column: Int32) -> String? { s.withBytes(column) { $0.map { recent.shared(utf8: $0) } } }
        func id(_ column: Int32) -> CompactID? { s.withBytes(column) { $0.map(CompactID.init(utf8:)) } }
        self.init(id: id(0) ?? .text(""), booking: id(1), typeAndApp: recent.typeAndApp(shared(2) ?? "", shared(3)),
                  startedAt: s.double(5), source: StartSource(rawValue: s.text(4) ?? "") ?? .app)
        if heldOnly {
            leaveToRow()
        } else {
            attributes = object(6)
            contentState = object(7)
        }
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
        delivery = s.withBytes(28) { heldOnly ? DeliveryEvidence(storedHead: $0) : DeliveryEvidence(stored: $0) }
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
