import Prometheus
import SQLiteDB

/// The push-to-start book's tables (`PushToStartBook`): written in the commits that change it,
/// which always catch the tables up (`CommitChanges.needsRowNow`), so that they hold the book
/// as of `applied_seq`; read whole at start-up.
extension EventStore {
    static func loadStarts(_ db: Database) throws -> PushToStartBook {
        let pending = try readStartPushes("pending_start_pushes", order: "seq", db)
        var tokens: [PushToStartBook.DeviceType: PushToStartBook.Token] = [:]
        let t = try db.prepare("SELECT device_id, attributes_type, fingerprint, at FROM push_to_start_tokens")
        while try t.step() {
            let key = PushToStartBook.DeviceType(deviceID: ExactString(t.text(0) ?? ""), attributesType: ExactString(t.text(1) ?? ""))
            tokens[key] = .init(fingerprint: t.text(2) ?? "", at: t.double(3))
        }
        var superseded = Set<String>()
        let s = try db.prepare("SELECT fingerprint FROM superseded_push_to_start_tokens")
        while try s.step() { if let f = s.text(0) { superseded.insert(f) } }
        let unstarted = try readStartPushes("unstarted_start_pushes", order: "deadline, seq", db)
        return PushToStartBook(pending: pending, tokens: tokens, superseded: superseded, unstarted: unstarted)
    }

    static func write(_ changes: PushToStartBook.Changes, _ db: Database) throws {
        guard !changes.isEmpty else { return }
        // Each a cached statement, run once per row.
        try writeStartPushes(changes.added, "pending_start_pushes", db)
        for seq in changes.resolved {
            try db.run("DELETE FROM pending_start_pushes WHERE seq = ?", [.integer(seq)])
        }
        for (key, value) in changes.tokens {
            try db.run("INSERT OR REPLACE INTO push_to_start_tokens (device_id, attributes_type, fingerprint, at) VALUES (?, ?, ?, ?)",
                       [.text(key.deviceID.text), .text(key.attributesType.text), .text(value.fingerprint), .real(value.at)])
        }
        for fingerprint in changes.superseded {
            try db.run("INSERT OR IGNORE INTO superseded_push_to_start_tokens (fingerprint) VALUES (?)", [.text(fingerprint)])
        }
        for fingerprint in changes.current {
            try db.run("DELETE FROM superseded_push_to_start_tokens WHERE fingerprint = ?", [.text(fingerprint)])
        }
        for seq in changes.verdicts {
            try db.run("INSERT OR IGNORE INTO start_push_verdicts (seq, why) VALUES (?, ?)",
                       [.integer(seq), .text(EventEffect.Why.supersededToken.rawValue)])
        }
        try writeStartPushes(changes.unstarted, "unstarted_start_pushes", db)
        if let latest = changes.unstarted.map(\.deadline).max() {
            try db.run("DELETE FROM unstarted_start_pushes WHERE deadline <= ?",
                       [.real(latest - PushToStartBook.unstartedKept)])
        }
    }

    /// The start pushes of `table` (`pending_start_pushes` or `unstarted_start_pushes`, one shape).
    private static func readStartPushes(_ table: String, order: String, _ db: Database) throws -> [PushToStartBook.Pending] {
        let s = try db.prepare("SELECT seq, booking_id, attributes_type, sent_at, deadline FROM \(table) ORDER BY \(order)")
        var out: [PushToStartBook.Pending] = []
        while try s.step() {
            out.append(.init(seq: s.int64(0), bookingID: s.text(1) ?? "", attributesType: s.text(2),
                             sentAt: s.double(3), deadline: s.double(4)))
        }
        return out
    }

    private static func writeStartPushes(_ pushes: [PushToStartBook.Pending], _ table: String, _ db: Database) throws {
        for p in pushes {
            try db.run("INSERT OR REPLACE INTO \(table) (seq, booking_id, attributes_type, sent_at, deadline) VALUES (?, ?, ?, ?, ?)",
                       [.integer(p.seq), .text(p.bookingID), p.attributesType.map(SQLiteValue.text) ?? .null,
                        .real(p.sentAt), .real(p.deadline)])
        }
    }

    /// Which of `rows` are start pushes the writer judged `superseded_token` when it stored them
    /// (the device events that decided it belong to no booking, so a replay cannot).
    func judgedSuperseded(among rows: [StoredEventRow]) throws -> Set<Int64> {
        try readers.read { try Self.judgedSuperseded(among: rows, in: $0) }
    }

    /// The same read on a connection of the caller's (`history`).
    static func judgedSuperseded(among rows: [StoredEventRow], in db: Database) throws -> Set<Int64> {
        guard let low = rows.map(\.seq).min(), let high = rows.map(\.seq).max() else { return [] }
        let seqs = Set(rows.map(\.seq))
        let s = try db.cached("SELECT seq FROM start_push_verdicts WHERE seq BETWEEN ? AND ?")
        defer { s.reset() }
        try s.bind(low, at: 1)
        try s.bind(high, at: 2)
        var out = Set<Int64>()
        while try s.step() {
            let seq = s.int64(0)
            if seqs.contains(seq) { out.insert(seq) }
        }
        return out
    }
}
