import JSON

/// How `DeliveryEvidence` is kept in the `activities.delivery` column: a blob of fixed-size
/// little-endian fields, null while empty. Every push an activity takes (and every subscriber
/// of a broadcast) rewrites it; as JSON text it was most of the cost of writing a row.
/// Rows written before this form hold JSON text, which is still read.
extension DeliveryEvidence {
    /// Version 1: `[1][confirmed_at: f64 (NaN: none)][missed: i64][count: u8]` then per known
    /// `[digest: u64][timestamp: f64][push seq: i64 (min: none)][sent_at: f64]`.
    var stored: [UInt8]? {
        guard !isEmpty else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(18 + 32 * known.count)
        bytes.append(1)
        func put(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        put((lastConfirmedAt ?? .nan).bitPattern)
        put(UInt64(bitPattern: Int64(missed)))
        bytes.append(UInt8(known.count))
        for k in known {
            put(k.digest)
            put(k.timestamp.bitPattern)
            put(UInt64(bitPattern: k.push?.seq ?? .min))
            put((k.push?.sentAt ?? .nan).bitPattern)
        }
        return bytes
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
        guard version == 1 else {
            self.init(json: String(decoding: bytes, as: UTF8.self))
            return
        }
        var at = 1
        func take() -> UInt64? {
            guard at + 8 <= bytes.count else { return nil }
            defer { at += 8 }
            return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        }
        guard let confirmed = take(), let missedBits = take(), at < bytes.count else { return }
        let count = Int(bytes[at])
        at += 1
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
