import JSON
import PostgresDB
import Prometheus

/// Writes one group commit to PostgreSQL: the events of every request in it, their effect on
/// the state (`CommitChanges`, the same engine as the SQLite writer) and every table that effect
/// touches, in one transaction (`synchronous_commit = on`: durable when COMMIT returns). Whole
/// or nothing: when anything fails, nothing of the commit is stored and the caller publishes
/// nothing of `changes`.
///
/// Unlike the SQLite store, the tables catch up in every commit (no `DeferredWrites`): they
/// always hold the state, so start-up (or a new leader) rebuilds it from them without a replay.
/// Round trips per commit are fixed, not per event: rows go in batches, one array parameter per
/// column (`unnest`), through prepared statements.
struct PostgresCommitWriter {
    let db: PostgresConnection
    /// The leader epoch every commit checks first (`LeaderEpoch`), or nil for a store that no
    /// leader election runs (in-process tests).
    let epoch: Int64?

    init(_ db: PostgresConnection, epoch: Int64? = nil) {
        self.db = db
        self.epoch = epoch
    }

    /// Stores `batches` (one per request, in order; their partitions made by `ensurePartitions`)
    /// at `now` and applies them to `changes`;
    /// writes the records they and the `due` deadlines changed and the counters that differ
    /// from `persisted`. Returns each request's summary.
    func commit(_ batches: [[Event]], at now: Double, due: [String], persisted: MonitorCounters,
                         _ changes: inout CommitChanges) throws -> [IngestSummary] {
        let events = batches.flatMap { $0 }
        let days = events.map { PostgresEventPartitions.day($0.occurredAt) }
        return try db.transaction {
            if let epoch { try LeaderEpoch.check(epoch, db) }
            let seqs = try allocateSeqs(events.count)
            let (fresh, stored) = try claimKeys(events, seqs: seqs, days: days)
            var summaries = [IngestSummary](repeating: IngestSummary(), count: batches.count)
            var rows: [(seq: Int64, day: Int64, event: Event, body: String)] = []
            var bodies: [ExactString: String] = [:]  // this commit's stored bodies by key (bytes, as the table)
            var dayOf: [Int64: Int64] = [:]
            var i = 0
            for (j, batch) in batches.enumerated() {
                for event in batch {
                    defer { i += 1 }
                    var body = event.body
                    // As in the SQLite store: an inherited booking goes into the document only.
                    if event.bookingID == nil, let id = event.activityID, let booking = try changes.bookingID(of: id) {
                        body = EventStore.body(body, inheriting: booking)
                    }
                    guard event.key == nil || fresh.contains(seqs[i]) else {
                        summaries[j].duplicates += 1
                        changes.duplicate(event)
                        if let key = event.key.map(ExactString.init), let first = bodies[key] ?? stored[key],
                           EventStore.isConflict(stored: first, sent: event.body, inheriting: body == event.body ? nil : body) {
                            summaries[j].conflicts += 1
                            changes.counters.inc(MonitorMetrics.ingestConflicts)
                        }
                        continue
                    }
                    if let key = event.key { bodies[ExactString(key)] = body }
                    summaries[j].accepted += 1
                    rows.append((seqs[i], days[i], event, body))
                    dayOf[seqs[i]] = days[i]
                    try changes.apply(event, seq: seqs[i], receivedAt: now)
                }
            }
            try insertEvents(rows, receivedAt: now)
            try writeSideTables(changes.takeWrites(), dayOf: dayOf)
            try changes.finish(at: now, due: due)
            try upsert(changes.changedIDs.sorted().map { changes.working($0)! })
            try PostgresStarts.write(changes.startChanges, dayOf: dayOf, db)
            try write(changes.counters, changedSince: persisted)
            return summaries
        }
    }

    /// Creates the day partitions `batches` need: before `commit`, outside its transaction. The
    /// commit's first round trip, so a connection lost since the last commit shows here, while
    /// nothing of this commit has been sent (`PostgresWriterSlot` then reconnects and tries again).
    func ensurePartitions(_ batches: [[Event]]) throws {
        try PostgresEventPartitions.ensure(Set(batches.joined().map { PostgresEventPartitions.day($0.occurredAt) }), db)
    }

    /// `count` fresh sequence numbers, in order (one round trip). A duplicate's number goes
    /// unused: `seq` orders events and needs no density.
    private func allocateSeqs(_ count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        return try db.prepared("SELECT nextval('events_seq') FROM generate_series(1, $1::integer)", [.integer(Int64(count))])
            .rows.map { $0[0].int64Value ?? 0 }
    }

    /// Inserts the keys of keyed events; returns the seqs whose key was new (within the commit,
    /// the first of two events with one key wins, as `ON CONFLICT DO NOTHING` inserts in order)
    /// and the stored bodies of keys already taken by earlier commits (for conflicts).
    private func claimKeys(_ events: [Event], seqs: [Int64], days: [Int64])
        throws -> (fresh: Set<Int64>, stored: [ExactString: String]) {
        let keyed = events.indices.filter { events[$0].key != nil }
        guard !keyed.isEmpty else { return ([], [:]) }
        let inserted = try db.prepared("""
            INSERT INTO event_keys (event_id, seq, day)
            SELECT event_id, seq, day FROM unnest($1::text[], $2::bigint[], $3::integer[]) WITH ORDINALITY AS u(event_id, seq, day, n)
            ORDER BY n
            ON CONFLICT (event_id) DO NOTHING RETURNING seq
            """,
            [try .array(keyed.map { .text(events[$0].key!) }), try .array(keyed.map { .integer(seqs[$0]) }),
             try .array(keyed.map { .integer(days[$0]) })])
        let fresh = Set(inserted.rows.compactMap { $0[0].int64Value })
        let taken = keyed.filter { !fresh.contains(seqs[$0]) }.map { events[$0].key! }
        guard !taken.isEmpty else { return (fresh, [:]) }
        let rows = try db.prepared("""
            SELECT k.event_id, e.body FROM event_keys k JOIN events e ON e.day = k.day AND e.seq = k.seq
            WHERE k.event_id = ANY($1::text[])
            """, [try .array(taken.map { .text($0) })]).rows
        var stored: [ExactString: String] = [:]
        for row in rows { if let key = row[0].textValue, let body = row[1].textValue { stored[ExactString(key)] = body } }
        return (fresh, stored)
    }

    private func insertEvents(_ rows: [(seq: Int64, day: Int64, event: Event, body: String)], receivedAt: Double) throws {
        guard !rows.isEmpty else { return }
        // With their days (`PostgresEventDays`): the reads of one activity or booking find them by those.
        try db.prepared(PostgresEventDays.insertEventsSQL, [
                try .array(rows.map { .integer($0.seq) }), try .array(rows.map { .integer($0.day) }),
                try .array(rows.map { PostgresValue($0.event.key) }), try .array(rows.map { .text($0.event.type.rawValue) }),
                try .array(rows.map { PostgresValue($0.event.activityID) }), try .array(rows.map { PostgresValue($0.event.bookingID) }),
                try .array(rows.map { .real($0.event.occurredAt) }), try .array(rows.map { _ in .real(receivedAt) }),
                try .array(rows.map { .text($0.body) }),
            ])
    }

    /// The rows a commit writes beside its events (`CommitWrites`), those of events filed by day.
    private func writeSideTables(_ writes: CommitWrites, dayOf: [Int64: Int64]) throws {
        if !writes.verdicts.isEmpty {
            try db.prepared("""
                INSERT INTO event_verdicts (seq, day, detail) SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[])
                ON CONFLICT (seq) DO UPDATE SET detail = excluded.detail
                """, [try .array(writes.verdicts.map { .integer($0.seq) }),
                      try .array(writes.verdicts.map { .integer(dayOf[$0.seq] ?? 0) }),
                      try .array(writes.verdicts.map { .text($0.detail) })])
        }
        for (type, shape) in writes.shapes {
            try db.prepared("""
                INSERT INTO content_shapes (attributes_type, shape) VALUES ($1, $2)
                ON CONFLICT (attributes_type) DO UPDATE SET shape = excluded.shape
                """, [.text(type), .text(JSONValue.object(shape.text).jsonString)])
        }
        if !writes.receivers.isEmpty {
            try db.prepared("""
                INSERT INTO broadcast_receivers (activity_id, seq, day) SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[])
                ON CONFLICT DO NOTHING
                """, [try .array(writes.receivers.map { .text($0.activityID) }),
                      try .array(writes.receivers.map { .integer($0.seq) }),
                      try .array(writes.receivers.map { .integer(dayOf[$0.seq] ?? 0) })])
        }
        if !writes.broadcastVerdicts.isEmpty {
            try db.prepared("""
                INSERT INTO broadcast_verdicts (seq, day, attributes_type, detail)
                SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::text[])
                ON CONFLICT (seq, attributes_type) DO UPDATE SET detail = excluded.detail
                """, [try .array(writes.broadcastVerdicts.map { .integer($0.seq) }),
                      try .array(writes.broadcastVerdicts.map { .integer(dayOf[$0.seq] ?? 0) }),
                      try .array(writes.broadcastVerdicts.map { .text($0.attributesType) }),
                      try .array(writes.broadcastVerdicts.map { .text($0.detail) })])
        }
        for (id, channel) in writes.channels { try PostgresChannels.write(channel, id, db) }
        if !writes.channelEvents.isEmpty {
            try db.prepared("""
                INSERT INTO channel_events (channel_id, seq, day) SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[])
                ON CONFLICT DO NOTHING
                """, [try .array(writes.channelEvents.map { .text($0.channelID) }),
                      try .array(writes.channelEvents.map { .integer($0.seq) }),
                      try .array(writes.channelEvents.map { .integer(dayOf[$0.seq] ?? 0) })])
        }
    }

    /// Writes `records` whole, in one statement.
    func upsert(_ records: [ActivityRecord]) throws {
        guard !records.isEmpty else { return }
        let values = records.map(\.postgresValues)
        let columns = try (0..<ActivityRecord.columns.count).map { c in try PostgresValue.array(values.map { $0[c] }) }
        try db.prepared(ActivityRecord.postgresUpsertSQL, columns)
    }

    private func write(_ counters: MonitorCounters, changedSince persisted: MonitorCounters) throws {
        let changed = counters.changedSeries(since: persisted)
        // Series that ended (their attributes type lost its label).
        let ended = changed.filter { !counters.holds($0) }, keys = changed.filter(counters.holds)
        if !ended.isEmpty {
            try db.prepared("DELETE FROM counters WHERE key = ANY($1::text[])", [try .array(ended.map { .text($0.storageKey) })])
        }
        guard !keys.isEmpty else { return }
        var values: [PostgresValue] = [], histograms: [PostgresValue] = []
        for key in keys {
            if let h = counters.histograms[key] {
                values.append(.real(Double(h.count)))
                histograms.append(.text(([String(h.sum)] + h.bucketCounts.map { String($0) }).joined(separator: ";")))
            } else {
                values.append(.real(counters.counters[key] ?? 0))
                histograms.append(.null)
            }
        }
        try db.prepared("""
            INSERT INTO counters (key, value, histogram) SELECT * FROM unnest($1::text[], $2::float8[], $3::text[])
            ON CONFLICT (key) DO UPDATE SET value = excluded.value, histogram = excluded.histogram
            """, [try .array(keys.map { .text($0.storageKey) }), try .array(values), try .array(histograms)])
    }
}
