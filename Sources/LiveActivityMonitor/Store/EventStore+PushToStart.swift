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
        try writeStartPushes(changes.added, "pending_start_pushes", db)
        let resolve = try db.cached("DELETE FROM pending_start_pushes WHERE seq = ?")
        for seq in changes.resolved {
            try resolve.bind(seq, at: 1)
            _ = try resolve.step()
            resolve.reset()
        }
        let token = try db.cached("""
            INSERT OR REPLACE INTO push_to_start_tokens (device_id, attributes_type, fingerprint, at) VALUES (?, ?, ?, ?)
            """)
        for (key, value) in changes.tokens {
            try token.bind(key.deviceID.text, at: 1)
            try token.bind(key.attributesType.text, at: 2)
            try token.bind(value.fingerprint, at: 3)
            try token.bind(value.at, at: 4)
            _ = try token.step()
            token.reset()
        }
        let supersede = try db.cached("INSERT OR IGNORE INTO superseded_push_to_start_tokens (fingerprint) VALUES (?)")
        for fingerprint in changes.superseded {
            try supersede.bind(fingerprint, at: 1)
            _ = try supersede.step()
            supersede.reset()
        }
        let current = try db.cached("DELETE FROM superseded_push_to_start_tokens WHERE fingerprint = ?")
        for fingerprint in changes.current {
            try current.bind(fingerprint, at: 1)
            _ = try current.step()
            current.reset()
        }
        let verdict = try db.cached("INSERT OR IGNORE INTO start_push_verdicts (seq, why) VALUES (?, ?)")
        for seq in changes.verdicts {
            try verdict.bind(seq, at: 1)
            try verdict.bind(EventEffect.Why.supersededToken.rawValue, at: 2)
            _ = try verdict.step()
            verdict.reset()
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
        guard !pushes.isEmpty else { return }
        let s = try db.cached("""
            INSERT OR REPLACE INTO \(table) (seq, booking_id, attributes_type, sent_at, deadline) VALUES (?, ?, ?, ?, ?)
            """)
        for p in pushes {
            try s.bind(p.seq, at: 1)
            try s.bind(p.bookingID, at: 2)
            try s.bind(p.attributesType, at: 3)
            try s.bind(p.sentAt, at: 4)
            try s.bind(p.deadline, at: 5)
            _ = try s.step()
            s.reset()
        }
    }

    /// Which of `rows` are start pushes the writer judged `superseded_token` when it stored them
    /// (the device events that decided it belong to no booking, so a replay cannot).
    func judgedSuperseded(among rows: [StoredEventRow]) throws -> Set<Int64> {
        guard let low = rows.map(\.seq).min(), let high = rows.map(\.seq).max() else { return [] }
        let seqs = Set(rows.map(\.seq))
        return try readers.read { db in
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
}
