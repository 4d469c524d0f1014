import PostgresDB
import Prometheus

/// The push-to-start book's tables in PostgreSQL (`PushToStartBook`), as `EventStore+PushToStart`
/// keeps them in SQLite: written in the commits that change it, read whole at start-up.
enum PostgresStarts {
    static func load(_ db: PostgresConnection) throws -> PushToStartBook {
        let pending = try readStartPushes("pending_start_pushes", order: "seq", db)
        var tokens: [PushToStartBook.DeviceType: PushToStartBook.Token] = [:]
        for row in try db.query("SELECT device_id, attributes_type, fingerprint, at FROM push_to_start_tokens").rows {
            let key = PushToStartBook.DeviceType(deviceID: ExactString(row[0].textValue ?? ""),
                                                 attributesType: ExactString(row[1].textValue ?? ""))
            tokens[key] = .init(fingerprint: row[2].textValue ?? "", at: row[3].doubleValue ?? 0)
        }
        let superseded = Set(try db.query("SELECT fingerprint FROM superseded_push_to_start_tokens").rows.compactMap { $0[0].textValue })
        let unstarted = try readStartPushes("unstarted_start_pushes", order: "deadline, seq", db)
        return PushToStartBook(pending: pending, tokens: tokens, superseded: superseded, unstarted: unstarted)
    }

    /// Writes what a commit changed in the book. `dayOf`: the day of each event of the commit,
    /// for the verdicts (deleted with their event's partition).
    static func write(_ changes: PushToStartBook.Changes, dayOf: [Int64: Int64], _ db: PostgresConnection) throws {
        guard !changes.isEmpty else { return }
        try writeStartPushes(changes.added, "pending_start_pushes", db)
        if !changes.resolved.isEmpty {
            try db.prepared("DELETE FROM pending_start_pushes WHERE seq = ANY($1::bigint[])",
                            [try .array(changes.resolved.map { .integer($0) })])
        }
        for (key, value) in changes.tokens {
            try db.prepared("""
                INSERT INTO push_to_start_tokens (device_id, attributes_type, fingerprint, at) VALUES ($1, $2, $3, $4)
                ON CONFLICT (device_id, attributes_type) DO UPDATE SET fingerprint = excluded.fingerprint, at = excluded.at
                """, [.text(key.deviceID.text), .text(key.attributesType.text), .text(value.fingerprint), .real(value.at)])
        }
        if !changes.superseded.isEmpty {
            try db.prepared("INSERT INTO superseded_push_to_start_tokens SELECT * FROM unnest($1::text[]) ON CONFLICT DO NOTHING",
                            [try .array(changes.superseded.sorted().map { .text($0) })])
        }
        if !changes.current.isEmpty {
            try db.prepared("DELETE FROM superseded_push_to_start_tokens WHERE fingerprint = ANY($1::text[])",
                            [try .array(changes.current.sorted().map { .text($0) })])
        }
        for seq in changes.verdicts {
            try db.prepared("INSERT INTO start_push_verdicts (seq, day, why) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                            [.integer(seq), .integer(dayOf[seq] ?? 0), .text(EventEffect.Why.supersededToken.rawValue)])
        }
        try writeStartPushes(changes.unstarted, "unstarted_start_pushes", db)
        if let latest = changes.unstarted.map(\.deadline).max() {
            try db.prepared("DELETE FROM unstarted_start_pushes WHERE deadline <= $1::float8",
                            [.real(latest - PushToStartBook.unstartedKept)])
        }
    }

    /// `table` is one of the two start-push tables, named here, never from input.
    private static func readStartPushes(_ table: String, order: String, _ db: PostgresConnection) throws -> [PushToStartBook.Pending] {
        try db.query("SELECT seq, booking_id, attributes_type, sent_at, deadline FROM \(table) ORDER BY \(order)").rows.map { r in
            .init(seq: r[0].int64Value ?? 0, bookingID: r[1].textValue ?? "", attributesType: r[2].textValue,
                  sentAt: r[3].doubleValue ?? 0, deadline: r[4].doubleValue ?? 0)
        }
    }

    private static func writeStartPushes(_ pushes: [PushToStartBook.Pending], _ table: String, _ db: PostgresConnection) throws {
        for p in pushes {
            try db.prepared("""
                INSERT INTO \(table) (seq, booking_id, attributes_type, sent_at, deadline) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (seq) DO UPDATE SET booking_id = excluded.booking_id, attributes_type = excluded.attributes_type,
                    sent_at = excluded.sent_at, deadline = excluded.deadline
                """, [.integer(p.seq), .text(p.bookingID), PostgresValue(p.attributesType), .real(p.sentAt), .real(p.deadline)])
        }
    }
}
