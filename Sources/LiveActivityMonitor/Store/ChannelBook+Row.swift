import JSON
import LiveActivityWire
import SQLiteDB
import Prometheus

/// How the channel book is kept in the `channels` table: a row per channel, written with the
/// commit that changed it, read back whole at start.
extension ChannelBook {
    static func load(_ db: Database) throws -> ChannelBook {
        var channels: [ExactString: Channel] = [:]
        let rows = try db.prepare("""
            SELECT channel_id, storage_policy, created_at, created_seq, deleted_at, deleted_seq, last_broadcast FROM channels
            """)
        while try rows.step() {
            guard let id = rows.text(0) else { continue }
            var c = Channel()
            if !rows.isNull(1) { c.storagePolicy = Int(rows.int64(1)) }
            if !rows.isNull(2) { c.created = Stamp(at: rows.double(2), seq: rows.int64(3)) }
            if !rows.isNull(4) { c.deleted = Stamp(at: rows.double(4), seq: rows.int64(5)) }
            c.lastBroadcast = Broadcast(stored: rows.text(6))
            channels[ExactString(id)] = c
        }
        return ChannelBook(channels)
    }
}

extension ChannelBook.Channel {
    func write(_ id: String, _ db: Database) throws {
        try db.run("""
            INSERT OR REPLACE INTO channels
                (channel_id, storage_policy, created_at, created_seq, deleted_at, deleted_seq, last_broadcast)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.text(id), storagePolicy.map { .integer(Int64($0)) } ?? .null,
                  created.map { .real($0.at) } ?? .null, created.map { .integer($0.seq) } ?? .null,
                  deleted.map { .real($0.at) } ?? .null, deleted.map { .integer($0.seq) } ?? .null,
                  lastBroadcast.map { .text($0.stored) } ?? .null])
    }
}

extension ChannelBook.Broadcast {
    /// `{"seq", "at", "event", "status", "reason", "priority", "latency_ms", "result", "why"}`.
    var stored: String {
        var w = JSONWriter()
        w.beginObject()
        w.key("seq"); w.number(seq)
        w.key("at"); w.number(at)
        w.key("event"); w.string(push.kind.rawValue)
        w.key("status"); w.number(push.status)
        w.key("reason"); w.string(push.reason)
        w.key("priority"); w.number(push.priority)
        w.key("latency_ms"); w.number(push.latencyMs)
        w.key("result"); w.string(effect.rawValue)
        w.key("why"); w.string(why?.rawValue)
        w.endObject()
        return w.string
    }

    /// Reads the column back; nil when it is empty or does not read.
    init?(stored text: String?) {
        guard let text, case .object(let o)? = try? JSONParser.parse(text),
              let seq = o["seq"]?.numberValue?.int64Value, let at = o["at"]?.doubleValue,
              let kind = o["event"]?.stringValue.flatMap(PushKind.init(rawValue:)),
              let status = o["status"]?.doubleValue, let priority = o["priority"]?.doubleValue,
              let latency = o["latency_ms"]?.doubleValue,
              let effect = o["result"]?.stringValue.flatMap(EventEffect.Result.init(rawValue:))
        else { return nil }
        self.init(seq: seq, at: at,
                  push: PushResult(kind: kind, status: Int(status), reason: o["reason"]?.stringValue,
                                   latencyMs: latency, priority: Int(priority), payloadBytes: nil),
                  effect: effect, why: o["why"]?.stringValue.flatMap(EventEffect.Why.init(rawValue:)))
    }
}
