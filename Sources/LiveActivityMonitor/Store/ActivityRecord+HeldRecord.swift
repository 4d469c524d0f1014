import LiveActivityWire
import SQLiteDB

/// The `activities.held_record` column: what a live activity's record holds in memory once its
/// row is written (`leaveToRow`: no texts, the delivery evidence's header without its known
/// contents), in one blob that every row write of a live activity sets beside the columns.
/// Start-up reads this column alone: SQLite hands out one column per row about five times
/// faster than the 33 the record is spread over (PERFORMANCE.md, session 23). The columns stay
/// the row's truth for every other reader; a live row without a blob this version reads (one
/// whose delivery is still in the old JSON form when the column was added, or a damaged one)
/// is read from its columns.
///
/// Version 1, little-endian: `[1][flags: u32][started_at f64][content_timestamp f64]`, the
/// optional times `flags` names, `[token_rotations i32]`, the last push's
/// `[status i16][priority i16][latency f64][at f64]`, the delivery header
/// `[confirmed_at f64 (NaN: none)][missed i64]`, the undecodable content's `[at f64]`, the
/// fingerprint (`[u64]` for 16 hex digits, else a string), then the strings (a LEB128 length
/// and UTF-8 bytes) and the priority-10 minutes' blob, each only when `flags` says so.
extension ActivityRecord {
    private struct HeldFlags: OptionSet {
        let rawValue: UInt32
        static let bookingID = Self(rawValue: 1 << 0)
        static let app = Self(rawValue: 1 << 1)
        static let staleDate = Self(rawValue: 1 << 2)
        static let relevanceScore = Self(rawValue: 1 << 3)
        static let endedAt = Self(rawValue: 1 << 4)
        static let tokenRotatedAt = Self(rawValue: 1 << 5)
        static let reportedStale = Self(rawValue: 1 << 6)
        static let staleCounted = Self(rawValue: 1 << 7)
        static let endedBy = Self(rawValue: 1 << 8)
        static let dismissalPolicy = Self(rawValue: 1 << 9)
        static let dismissalDate = Self(rawValue: 1 << 10)
        static let dismissedAt = Self(rawValue: 1 << 11)
        static let fingerprintDigits = Self(rawValue: 1 << 12)
        static let fingerprintText = Self(rawValue: 1 << 13)
        static let tokenInvalidReason = Self(rawValue: 1 << 14)
        static let lastPush = Self(rawValue: 1 << 15)
        static let lastPushReason = Self(rawValue: 1 << 16)
        static let delivery = Self(rawValue: 1 << 17)
        static let undecodable = Self(rawValue: 1 << 18)
        static let startDate = Self(rawValue: 1 << 19)
        static let channelID = Self(rawValue: 1 << 20)
    }

    private static let heldRecordVersion: UInt8 = 1

    /// The column's value for this record (as start-up would hold it after reading it back).
    var heldRecord: [UInt8] { heldRecord(priority10Blob: priority10.blob) }

    /// The same, given its priority-10 minutes' stored form (a row write has made it for their
    /// own column).
    func heldRecord(priority10Blob: [UInt8]) -> [UInt8] {
        var flags: HeldFlags = []
        func mark(_ flag: HeldFlags, _ present: Bool) { if present { flags.insert(flag) } }
        mark(.bookingID, bookingID != nil)
        mark(.app, app != nil)
        mark(.staleDate, staleDate != nil)
        mark(.relevanceScore, relevanceScore != nil)
        mark(.endedAt, endedAt != nil)
        mark(.tokenRotatedAt, tokenRotatedAt != nil)
        mark(.reportedStale, reportedStale)
        mark(.staleCounted, staleCounted)
        mark(.endedBy, endedBy != nil)
        mark(.dismissalPolicy, dismissalPolicy != nil)
        mark(.dismissalDate, dismissalDate != nil)
        mark(.dismissedAt, dismissedAt != nil)
        if case .digits? = storedFingerprint { flags.insert(.fingerprintDigits) }
        if case .text? = storedFingerprint { flags.insert(.fingerprintText) }
        mark(.tokenInvalidReason, tokenInvalidReason != nil)
        mark(.lastPush, lastPush != nil)
        mark(.lastPushReason, lastPush?.reason != nil)
        mark(.delivery, !delivery.isEmpty)
        mark(.undecodable, undecodable != nil)
        mark(.startDate, startDate != nil)
        mark(.channelID, channelID != nil)

        var out = HeldRecordWriter()
        out.integer(Self.heldRecordVersion)
        out.integer(flags.rawValue)
        out.time(startedAt)
        out.time(contentTimestamp)
        func optional(_ time: Double?) { if let time { out.time(time) } }
        optional(staleDate)
        optional(relevanceScore)
        optional(endedAt)
        optional(tokenRotatedAt)
        optional(dismissalDate)
        optional(dismissedAt)
        optional(startDate)
        out.integer(Int32(clamping: tokenRotations))
        if let lastPush {
            out.integer(Int16(clamping: lastPush.status))
            out.integer(Int16(clamping: lastPush.priority))
            out.time(lastPush.latencyMs)
            out.time(lastPush.at)
        }
        if !delivery.isEmpty {
            out.time(delivery.lastConfirmedAt ?? .nan)
            out.integer(Int64(delivery.missed))
        }
        if let undecodable { out.time(undecodable.at) }
        switch storedFingerprint {
        case .digits(let bits)?: out.integer(bits)
        case .text(let text)?: out.string(text.string)
        case nil: break
        }
        out.id(id)
        if let booking { out.id(booking) }
        out.string(attributesType)
        if let app { out.string(app) }
        out.string(source.rawValue)
        if let endedBy { out.string(endedBy.rawValue) }
        if let dismissalPolicy { out.string(dismissalPolicy.rawValue) }
        if let tokenInvalidReason { out.string(tokenInvalidReason) }
        if let reason = lastPush?.reason { out.string(reason) }
        if let undecodable { out.string(undecodable.detail) }
        if let channelID { out.string(channelID) }
        out.blob(priority10Blob)
        return out.bytes
    }

    /// Reads a `held_record` column back; nil when it is not one this version wrote whole (the
    /// caller then reads the row's columns).
    init?(heldRecord bytes: UnsafeRawBufferPointer, sharing recent: inout RecentStrings) {
        var input = HeldRecordReader(bytes)
        guard input.byte() == Self.heldRecordVersion, let raw = input.integer(UInt32.self) else { return nil }
        let flags = HeldFlags(rawValue: raw)
        func optionalTime(_ flag: HeldFlags) -> Double?? {
            guard flags.contains(flag) else { return .some(nil) }
            return input.time().map { .some($0) }
        }
        guard let startedAt = input.time(), let contentTimestamp = input.time(),
              let staleDate = optionalTime(.staleDate), let relevanceScore = optionalTime(.relevanceScore),
              let endedAt = optionalTime(.endedAt), let tokenRotatedAt = optionalTime(.tokenRotatedAt),
              let dismissalDate = optionalTime(.dismissalDate), let dismissedAt = optionalTime(.dismissedAt),
              let startDate = optionalTime(.startDate), let rotations = input.integer(Int32.self)
        else { return nil }
        var push: (status: Int, priority: Int, latencyMs: Double, at: Double)?
        if flags.contains(.lastPush) {
            guard let status = input.integer(Int16.self), let priority = input.integer(Int16.self),
                  let latency = input.time(), let at = input.time() else { return nil }
            push = (Int(status), Int(priority), latency, at)
        }
        var delivery = DeliveryEvidence()
        if flags.contains(.delivery) {
            guard let confirmedAt = input.time(), let missed = input.integer(Int64.self) else { return nil }
            delivery = DeliveryEvidence(confirmedAt: confirmedAt.isNaN ? nil : confirmedAt,
                                        missed: Int(missed), knownInRow: true)
        }
        var undecodableAt: Double?
        if flags.contains(.undecodable) {
            guard let at = input.time() else { return nil }
            undecodableAt = at
        }
        var fingerprint: TokenFingerprint.Stored?
        if flags.contains(.fingerprintDigits) {
            guard let bits = input.integer(UInt64.self) else { return nil }
            fingerprint = .digits(bits)
        } else if flags.contains(.fingerprintText) {
            guard let text = input.string() else { return nil }
            fingerprint = .text(.init(text))
        }
        func optionalString(_ flag: HeldFlags, shared: Bool = false) -> String?? {
            guard flags.contains(flag) else { return .some(nil) }
            return (shared ? input.sharedString(&recent) : input.string()).map { .some($0) }
        }
        // The ids in their order, read as records keep them.
        let activityID = input.id()
        let optionalBooking: CompactID?? = flags.contains(.bookingID) ? input.id().map { .some($0) } : .some(nil)
        guard let activityID, let bookingID = optionalBooking,
              let type = input.sharedString(&recent), let app = optionalString(.app, shared: true),
              let source = input.string().flatMap(StartSource.init(rawValue:)),
              let endedBy = optionalString(.endedBy), let dismissalPolicy = optionalString(.dismissalPolicy),
              let tokenInvalidReason = optionalString(.tokenInvalidReason), let pushReason = optionalString(.lastPushReason),
              let undecodableDetail = optionalString(.undecodable), let channelID = optionalString(.channelID),
              let priority10 = input.blob().map(Priority10Minutes.init(blob:)), input.isAtEnd
        else { return nil }

        // The same assignments, in the same order, as the row reader's (`init(row:sharing:heldOnly:)`).
        self.init(id: activityID, booking: bookingID, typeAndApp: recent.typeAndApp(type, app),
                  startedAt: startedAt, source: source)
        leaveToRow()
        self.contentTimestamp = contentTimestamp
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
        reportedStale = flags.contains(.reportedStale)
        staleCounted = flags.contains(.staleCounted)
        self.endedAt = endedAt
        self.endedBy = endedBy.flatMap(EndedBy.init(rawValue:))
        self.dismissalPolicy = dismissalPolicy.flatMap(DismissalPolicy.init(rawValue:))
        if let dismissalDate { self.dismissalDate = dismissalDate }
        if let dismissedAt { self.dismissedAt = dismissedAt }
        storedFingerprint = fingerprint
        tokenRotations = Int(rotations)
        self.tokenRotatedAt = tokenRotatedAt
        if let tokenInvalidReason { self.tokenInvalidReason = tokenInvalidReason }
        if let push {
            lastPush = LastPush(status: push.status, reason: pushReason, latencyMs: push.latencyMs,
                                priority: push.priority, at: push.at)
        }
        self.priority10 = priority10
        self.delivery = delivery
        if let undecodableAt, let undecodableDetail { undecodable = Undecodable(at: undecodableAt, detail: undecodableDetail) }
        if let startDate { self.startDate = startDate }
        if let channelID { self.channelID = channelID }
    }
}

extension ActivityRecord {
    /// The migration that adds `held_record` and fills it for every live row, 10,000 at a time
    /// (on a million live activities, once, in its own transaction).
    static let heldRecordAdded: Migration = .code { db throws(SQLiteError) in
        try db.execute("ALTER TABLE activities ADD COLUMN \(ActivityRecord.heldRecordColumn) BLOB")
        let batch = try db.prepare("SELECT " + heldColumnsSQL + ", rowid FROM activities"
            + " WHERE dismissed_at IS NULL AND rowid > ? ORDER BY rowid LIMIT 10000")
        let fill = try db.prepare("UPDATE activities SET \(ActivityRecord.heldRecordColumn) = ? WHERE rowid = ?")
        let rowidColumn = Int32(columns.count)
        var after = Int64.min, recent = RecentStrings()
        while true {
            try batch.bind([.integer(after)])
            var filled: [(rowid: Int64, held: [UInt8])] = []
            var last: Int64?
            while try batch.step() {
                let rowid = batch.int64(rowidColumn)
                last = rowid
                let record = try ActivityRecord(row: batch, sharing: &recent, heldOnly: true)
                // Known contents read into memory: the row's delivery is the old JSON form, which
                // the blob cannot say (it holds the binary form's header). Left without one,
                // the row is read from its columns until its next write.
                guard record.delivery.known.isEmpty else { continue }
                filled.append((rowid, record.heldRecord))
            }
            batch.reset()
            guard let last else { return }
            for row in filled {
                try fill.bind([.blob(row.held), .integer(row.rowid)])
                _ = try fill.step()
                fill.reset()
            }
            after = last
        }
    }
}

/// Appends `held_record`'s fields.
private struct HeldRecordWriter {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(256) }

    mutating func integer<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func time(_ value: Double) { integer(value.bitPattern) }

    /// A LEB128 length, then the bytes.
    mutating func blob(_ value: some Collection<UInt8>) {
        var length = value.count
        repeat {
            let low = UInt8(length & 0x7f)
            length >>= 7
            bytes.append(length == 0 ? low : low | 0x80)
        } while length != 0
        bytes.append(contentsOf: value)
    }

    mutating func string(_ value: String) { blob(value.utf8) }

    mutating func id(_ value: CompactID) { value.withUTF8 { blob($0) } }
}

/// Reads `held_record`'s fields in place; nil for each read past the end.
private struct HeldRecordReader {
    private let bytes: UnsafeRawBufferPointer
    private var at = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { at == bytes.count }

    mutating func byte() -> UInt8? {
        guard at < bytes.count else { return nil }
        defer { at += 1 }
        return bytes[at]
    }

    @inline(__always)
    mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
        guard MemoryLayout<T>.size <= bytes.count - at else { return nil }
        defer { at += MemoryLayout<T>.size }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: T.self))
    }

    mutating func time() -> Double? { integer(UInt64.self).map(Double.init(bitPattern:)) }

    /// A length-prefixed run of bytes, in place.
    mutating func blob() -> UnsafeRawBufferPointer? {
        var length = 0, shift = 0
        while true {
            guard shift < 63, let byte = byte() else { return nil }
            length |= Int(byte & 0x7f) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        guard length <= bytes.count - at else { return nil }
        defer { at += length }
        return UnsafeRawBufferPointer(rebasing: bytes[at..<(at + length)])
    }

    mutating func string() -> String? { blob().map { String(decoding: $0, as: UTF8.self) } }

    /// An id, as a record keeps it (a UUID without making its text).
    mutating func id() -> CompactID? { blob().map(CompactID.init(utf8:)) }

    /// A string shared with the rows read before (`RecentStrings`): types and apps repeat.
    mutating func sharedString(_ recent: inout RecentStrings) -> String? { blob().map { recent.shared(utf8: $0) } }
}
