import JSON
import PostgresDB
import Prometheus

/// Rebuilds what the writer keeps in memory (`MonitorState`) from PostgreSQL's tables, which
/// every commit brings up to date: no replay of the event log. It follows `EventStore.load`
/// (SQLite) step for step; the two read the same data from different tables.
enum PostgresStateLoader {
    static func load(_ db: PostgresConnection, reservedTypes: [String], declaredShapes: [String: ObjectShape],
                     maxLiveActivities: Int) throws -> MonitorState {
        var s = MonitorState()
        var learned: [String: ObjectShape] = [:]
        for row in try db.query("SELECT attributes_type, shape FROM content_shapes").rows {
            // A row that no longer reads (edited by hand) is learned again from the next contents.
            guard let type = row[0].textValue, case .object(let text)? = try? JSONParser.parse(row[1].textValue ?? ""),
                  case .success(let shape) = ObjectShape.parse(text) else { continue }
            learned[type] = shape
        }
        s.shapes = ContentShapes(judging: true, declared: declaredShapes, learned: learned)
        // More than memory holds: the newest-started.
        let live = try db.query(ActivityRecord.postgresSelectSQL
                                + " WHERE dismissed_at IS NULL ORDER BY started_at DESC, activity_id LIMIT $1::bigint",
                                [.integer(Int64(maxLiveActivities))])
        for row in live.rows {
            let record = ActivityRecord(postgresRow: row)
            s.records[record.activityID] = record
            if let next = record.nextDeadline { s.deadlines.push(next, record.activityID) }
        }
        var appStarts: [ExactString: Double] = [:]
        for row in try db.query("SELECT key, value, histogram FROM counters").rows {
            let key = SeriesKey.stored(row[0].textValue ?? "")
            let value = row[1].doubleValue ?? 0
            if let text = row[2].textValue, let family = MonitorMetrics.persistedHistograms.first(where: { $0.name == key.family }) {
                var h = HistogramValue(upperBounds: family.buckets)
                let parts = text.split(separator: ";")
                let buckets = parts.dropFirst().compactMap { UInt64($0) }
                if let sum = parts.first.flatMap({ Double($0) }), buckets.count == h.bucketCounts.count {
                    h.sum = sum
                    h.bucketCounts = buckets
                }
                s.counters.histograms[key] = h
            } else {
                s.counters.counters[key] = value
            }
            if MonitorMetrics.fits(key, [MonitorMetrics.started]), key.labelValues[1] == StartSource.app.rawValue {
                appStarts[ExactString(key.labelValues[0]), default: 0] += value
            }
        }
        // The free label slots go to app-reported types that live activities use, then to the most started.
        var liveByType: [ExactString: Int] = [:]
        s.records.withRecords { records in
            for record in records { liveByType[ExactString(record.attributesType), default: 0] += 1 }
        }
        let candidates = appStarts.keys.sorted { a, b in
            let x = (liveByType[a] ?? 0, appStarts[a]!), y = (liveByType[b] ?? 0, appStarts[b]!)
            return x != y ? x > y : ExactText.precedes(a.text, b.text)
        }
        s.labels = AttributesTypeLabels(reserved: reservedTypes, admitted: candidates.map(\.text))
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
