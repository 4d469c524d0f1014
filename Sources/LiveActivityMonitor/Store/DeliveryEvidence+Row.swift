import JSON

/// How `DeliveryEvidence` is kept in the `activities.delivery` column: a blob of fixed-size
/// little-endian fields, null while empty. Every push an activity takes (and every subscriber
/// of a broadcast) rewrites it; as JSON text it was most of the cost of writing a row.
/// Rows written before this form hold JSON text, which is still read.
extension DeliveryEvidence {
    /// Version 2 (written since session 18): `[2][confirmed_at: f64 (NaN: none)][missed: i64]`
    /// (`headBytes`) then per known `[digest: u64][timestamp: f64][push seq: i64 (min: none)]
    /// [sent_at: f64]` (`entryBytes`), as many as the length holds. Version 1 had a count byte
    /// after the header and is still read.
    var stored: [UInt8]? {
        guard !isEmpty else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headBytes + Self.entryBytes * known.count)
        appendHead(to: &bytes)
        appendEntries(to: &bytes)
        return bytes
    }

    static let headBytes = 17
    static let entryBytes = 32

    /// The version 2 header.
    var storedHead: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headBytes)
        appendHead(to: &bytes)
        return bytes
    }

    /// The entries memory holds (while `knownInRow`, the tail after the row's).
    var storedEntries: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.entryBytes * known.count)
        appendEntries(to: &bytes)
        return bytes
    }

    private func appendHead(to bytes: inout [UInt8]) {
        bytes.append(2)
        Self.put((lastConfirmedAt ?? .nan).bitPattern, &bytes)
        Self.put(UInt64(bitPattern: Int64(missed)), &bytes)
    }

    private func appendEntries(to bytes: inout [UInt8]) {
        for k in known {
            Self.put(k.digest, &bytes)
            Self.put(k.timestamp.bitPattern, &bytes)
            Self.put(UInt64(bitPattern: k.push?.seq ?? .min), &bytes)
            Self.put((k.push?.sentAt ?? .nan).bitPattern, &bytes)
        }
    }

    private static func put(_ value: UInt64, _ bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// The value an update gives the column of a record whose known contents are partly in the
    /// row (`knownInRow`), bound `storedHead` then `storedEntries`: the header, then the newest
    /// `maxKnown` of the row's entries and the tail, with no read by the writer. `||` makes
    /// text, and `substr` counts a text's characters, so the concatenations are cast to blobs.
    /// `substr` of an empty blob is null, hence the `coalesce`. A JSON-form row is never merged
    /// so (a record read from one holds all its entries).
    static let mergeSQL = "CAST(? || coalesce(substr(CAST(" + rowEntriesSQL + " || ? AS BLOB), -\(maxKnown * entryBytes)), X'') AS BLOB)"

    /// The entries of the column as stored, by its version (none from a null or JSON column).
    private static let rowEntriesSQL = "CASE substr(delivery, 1, 1) WHEN X'02' THEN substr(delivery, \(headBytes + 1))"
        + " WHEN X'01' THEN substr(delivery, \(headBytes + 2)) ELSE X'' END"

    /// The column as start-up and the writer's loader select it: a binary form's header only
    /// (its entries stay in the row), the JSON form whole.
    static let headSQL = "CASE WHEN typeof(delivery) = 'blob' THEN substr(delivery, 1, \(headBytes)) ELSE delivery END"

    /// Reads a column selected with `headSQL`: a binary form's header, its entries left in the
    /// row (`knownInRow`); the JSON form whole.
    init(storedHead bytes: UnsafeRawBufferPointer?) {
        guard let bytes, let version = bytes.first, version == 1 || version == 2 else {
            self.init(stored: bytes)
            return
        }
        guard bytes.count >= Self.headBytes else { self.init(); return }
        func take(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        let confirmedAt = Double(bitPattern: take(1))
        self.init(confirmedAt: confirmedAt.isNaN ? nil : confirmedAt, missed: Int(Int64(bitPattern: take(9))), knownInRow: true)
    }

    /// Reads the column back (either form); what does not read is left out (empty evidence, at worst).
    init(stored bytes: [UInt8]?) {
        guard let bytes else { self.init(stored: nil as UnsafeRawBufferPointer?); return }
        self = bytes.withUnsafeBytes { DeliveryEvidence(stored: $0) }
    }

    /// The same from the column's bytes in place (start-up reads them so: no copy of the blob).
    init(stored bytes: UnsafeRawBufferPointer?) {
        self.init()
        guard let bytes, let version = bytes.first else { return }
        guard version == 1 || version == 2 else {
            self.init(json: String(decoding: bytes, as: UTF8.self))
            return
        }
        var at = 1
        func take() -> UInt64? {
            guard at + 8 <= bytes.count else { return nil }
            defer { at += 8 }
            return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        }
        guard let confirmed = take(), let missedBits = take() else { return }
        let count: Int
        if version == 1 {
            guard at < bytes.count else { return }
            count = Int(bytes[at])
            at += 1
        } else {
            count = (bytes.count - at) / Self.entryBytes
        }
        let confirmedAt = Double(bitPattern: confirmed)
        lastConfirmedAt = confirmedAt.isNaN ? nil : confirmedAt
        missed = Int(Int64(bitPattern: missedBits))
        known.reserveCapacity(count)
        for _ in 0..<count {
            guard let digest = take(), let timestamp = take(), let seq = take(), let sentAt = take() else { return }
            let push = Int64(bitPattern: seq) == .min ? nil : (seq: Int64(bitPattern: seq), sentAt: Double(bitPattern: sentAt))
            known.append(Known(digest: digest, timestamp: Double(bitPattern: timestamp), push: push))
        }
    }

    /// The first form: `{"confirmed_at", "missed", "known": [{"digest", "timestamp", "push", "sent_at"}]}`.
    private init(json text: String) {
        self.init()
        guard case .object(let o)? = try? JSONParser.parse(text) else { return }
        lastConfirmedAt = o["confirmed_at"]?.doubleValue
        missed = o["missed"]?.doubleValue.map { Int($0) } ?? 0
        for item in o["known"]?.arrayValue ?? [] {
            guard let digest = item["digest"]?.stringValue.flatMap({ UInt64($0, radix: 16) }),
                  let timestamp = item["timestamp"]?.doubleValue
            else { continue }
            var push: (seq: Int64, sentAt: Double)?
            if let seq = item["push"]?.numberValue?.int64Value, let sentAt = item["sent_at"]?.doubleValue { push = (seq, sentAt) }
            known.append(Known(digest: digest, timestamp: timestamp, push: push))
        }
    }
}
