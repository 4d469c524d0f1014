import Dispatch
import JSON
import SQLiteDB

/// Start-up after a crash: the current-state and counters tables include the events up to
/// `store_state.applied_seq` (DeferredWrites); the events stored after it are applied again,
/// commit by commit, as the writer applied them.
extension EventStore {
    func replay(_ db: Database) throws {
        let applied = try db.scalar("SELECT applied_seq FROM store_state")
        // A clean stop leaves nothing to replay, and no write here: a read-only file still opens.
        guard case .integer(let appliedSeq)? = applied,
              try db.scalar("SELECT 1 FROM events WHERE seq > ?", [.integer(appliedSeq)]) != nil else { return }
        let rows = try db.prepare("""
            SELECT event_id, activity_id, booking_id, occurred_at, received_at, body, seq,
                   \(Self.verdictColumns) FROM events
            WHERE seq > ? ORDER BY seq
            """)
        try rows.bind(appliedSeq, at: 1)
        let started = DispatchTime.now().uptimeNanoseconds
        let persisted = state.withLock { $0.counters }
        var replayed = 0, unreadable = 0
        try db.transaction(.immediate) {
            var commit: (changes: CommitChanges, receivedAt: Double)?
            // One commit's events share their `received_at` (the clock moves between commits).
            func finish() throws {
                guard var changes = commit?.changes, let now = commit?.receivedAt else { return }
                commit = nil
                try changes.finish(at: now, due: state.withLock { $0.records.popDueDeadlines(now).ids })
                // Rows written as each commit ends: a record that leaves memory is read from its row.
                let written = try Self.writeRows(of: changes, at: now, db)
                try Self.write(changes.startChanges, db)
                publish(&changes, at: now, rowsWritten: written)
            }
            while try rows.step() {
                let receivedAt = rows.double(4)
                if commit?.receivedAt != receivedAt {
                    try finish()
                    // The shapes were stored with the commits that learned them, and each event's
                    // verdicts with it (a broadcast's per type): the replay judges nothing again.
                    let (counters, labels, starts, channels) = state.withLock {
                        ($0.counters, $0.labels, $0.takeStarts(), $0.channels)
                    }
                    commit = (CommitChanges(counters: counters, labels: labels, shapes: .recorded, starts: starts,
                                            channels: channels, settings: settings, load: recordLoader(db),
                                            subscribers: subscriberFinder(), texts: textReader(db),
                                            known: knownReader(db)), receivedAt)
                }
                guard var event = EventValidator.stored(body: rows.text(5) ?? "", key: rows.text(0),
                                                        bookingID: rows.text(2), occurredAt: rows.double(3)) else {
                    unreadable += 1
                    continue
                }
                event.contentVerdict = rows.text(7)
                event.broadcastVerdicts = StoredEventRow.broadcastVerdicts(rows.text(8))
                try commit!.changes.apply(event, seq: rows.int64(6), receivedAt: receivedAt)
                replayed += 1
            }
            try finish()
            try writeBehind([], nil, since: persisted, named: nil, db)
        }
        guard replayed + unreadable > 0 else { return }
        let milliseconds = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        log("store: replayed \(replayed) events stored after the last update of the current-state tables "
            + "(the server did not stop cleanly) in \(milliseconds) ms"
            + (unreadable > 0 ? "; \(unreadable) stored events could not be read back and were skipped" : ""))
    }
}
