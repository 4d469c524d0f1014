import JSON
import PostgresDB
import Prometheus

/// Rebuilds what the writer keeps in memory (`MonitorState`) from PostgreSQL's tables, which
/// every commit brings up to date: no replay of the event log. It follows `EventStore.load`
/// (SQLite) step for step; the two read the same data from different tables.
enum PostgresStateLoader {
    /// The state a store answers from, with the gauges counted from `now`. The leader's store
    /// builds its memory with it (at takeover, after a failed commit), and a standby its
    /// snapshot (`PostgresStandbyStore`).
    static func loadServing(_ db: PostgresConnection, reservedTypes: [String], declaredShapes: [String: ObjectShape],
                            maxLiveActivities: Int, priority10Budget: Int, now: Double) throws -> MonitorState {
        var s = MonitorState()
        var learned: [String: ObjectShape] = [:]
        for row in try db.query("SELECT attributes_type, shape FROM content_shapes").rows {
            if let type = row[0].textValue, let shape = MonitorState.storedShape(row[1].textValue) { learned[type] = shape }
        }
        s.shapes = ContentShapes(judging: true, declared: declaredShapes, learned: learned)
        // More than memory holds: the newest-started.
        let live = try db.query(ActivityRecord.postgresSelectSQL
                                + " WHERE dismissed_at IS NULL ORDER BY started_at DESC, activity_id LIMIT $1::bigint",
                                [.integer(Int64(maxLiveActivities))])
        s.load(records: RecordStorage(live.rows.lazy.map(ActivityRecord.init(postgresRow:))), priority10Budget: priority10Budget, gaugesFrom: now)
        var appStarts: [ExactString: Double] = [:]
        for row in try db.query("SELECT key, value, histogram FROM counters").rows {
            s.loadCounter(key: row[0].textValue ?? "", value: row[1].doubleValue ?? 0, histogram: row[2].textValue,
                          appStarts: &appStarts)
        }
        s.assignLabels(reserved: reservedTypes, appStarts: appStarts)
        s.publish(try PostgresStarts.load(db))
        s.channels = try PostgresChannels.load(db)
        return s
    }

    /// One activity's row, live or not (nil if never seen).
    static func record(_ id: String, _ db: PostgresConnection) throws -> ActivityRecord? {
        try db.prepared(ActivityRecord.postgresSelectSQL + " WHERE activity_id = $1", [.text(id)]).rows.first
            .map(ActivityRecord.init(postgresRow:))
    }
}
