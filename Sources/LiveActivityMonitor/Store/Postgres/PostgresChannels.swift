import PostgresDB
import Prometheus

/// The channel book (`ChannelBook`) in PostgreSQL's `channels` table, as `ChannelBook+Row`
/// keeps it in SQLite: a row per channel, written with the commit that changed it, read whole
/// at start.
enum PostgresChannels {
    static func load(_ db: PostgresConnection) throws -> ChannelBook {
        var channels: [ExactString: ChannelBook.Channel] = [:]
        let rows = try db.query("""
            SELECT channel_id, storage_policy, created_at, created_seq, deleted_at, deleted_seq, last_broadcast FROM channels
            """).rows
        for r in rows {
            guard let id = r[0].textValue else { continue }
            var c = ChannelBook.Channel()
            c.storagePolicy = r[1].int64Value.map { Int($0) }
            if let at = r[2].doubleValue, let seq = r[3].int64Value { c.created = ChannelBook.Stamp(at: at, seq: seq) }
            if let at = r[4].doubleValue, let seq = r[5].int64Value { c.deleted = ChannelBook.Stamp(at: at, seq: seq) }
            c.lastBroadcast = ChannelBook.Broadcast(stored: r[6].textValue)
            channels[ExactString(id)] = c
        }
        return ChannelBook(channels)
    }

    static func write(_ channel: ChannelBook.Channel, _ id: String, _ db: PostgresConnection) throws {
        try db.prepared("""
            INSERT INTO channels (channel_id, storage_policy, created_at, created_seq, deleted_at, deleted_seq, last_broadcast)
            VALUES ($1, $2::bigint, $3::float8, $4::bigint, $5::float8, $6::bigint, $7)
            ON CONFLICT (channel_id) DO UPDATE SET storage_policy = excluded.storage_policy,
                created_at = excluded.created_at, created_seq = excluded.created_seq,
                deleted_at = excluded.deleted_at, deleted_seq = excluded.deleted_seq,
                last_broadcast = excluded.last_broadcast
            """, [.text(id), PostgresValue(channel.storagePolicy.map { Int64($0) }),
                  PostgresValue(channel.created?.at), PostgresValue(channel.created?.seq),
                  PostgresValue(channel.deleted?.at), PostgresValue(channel.deleted?.seq),
                  PostgresValue(channel.lastBroadcast?.stored)])
    }
}
