import JSON

/// How `DeliveryEvidence` is kept in the `activities.delivery` column: JSON, null while empty.
extension DeliveryEvidence {
    /// `{"confirmed_at", "missed", "known": [{"digest", "timestamp", "push", "sent_at"}]}`;
    /// the digest as 16 hex digits (a JSON number would lose bits).
    var stored: String? {
        guard !isEmpty else { return nil }
        var w = JSONWriter()
        w.beginObject()
        w.key("confirmed_at"); w.number(lastConfirmedAt)
        w.key("missed"); w.number(missed)
        w.key("known")
        w.beginArray()
        for k in known {
            w.beginObject()
            w.key("digest"); w.string(String(k.digest, radix: 16))
            w.key("timestamp"); w.number(k.timestamp)
            w.key("push"); w.number(k.push.map { $0.seq })
            w.key("sent_at"); w.number(k.push.map { $0.sentAt })
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.string
    }

    /// Reads the column back; what does not read is left out (empty evidence, at worst).
    init(stored text: String?) {
        self.init()
        guard let text, case .object(let o)? = try? JSONParser.parse(text) else { return }
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
