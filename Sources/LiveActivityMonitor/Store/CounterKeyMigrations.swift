import SQLiteDB

/// Migrations 7 and 8 of the `counters` table. 7: keys from their first form — family and label values
/// joined by U+001F — to `SeriesKey.storageKey`. The first form could not hold a label value
/// with U+001F in it: an attributes type such as "A\u{1F}app" split into extra labels, and
/// after a restart the exposition met two samples with one label set and stopped the process.
public enum CounterKeyMigrations {
    static let firstFormToJSON: Migration = .code { db throws(SQLiteError) in
        try rewriteKeys(db) { series(legacyKey: $0).storageKey }
    }

    /// Migration 8: the overflow of `attributes_type` reads `(other)`, no longer `other`, so
    /// that a real type named `other` has a series of its own. Series stored as `other` were
    /// the overflow's (a real type of that name could not be told from it).
    static let overflowRenamed: Migration = .code { db throws(SQLiteError) in
        try rewriteKeys(db) { text in
            var key = SeriesKey.stored(text)
            guard MonitorCounters.attributesType(of: key)?.text == "other" else { return text }
            key.labelValues[0] = AttributesTypeLabels.other
            return key.storageKey
        }
    }

    /// Rewrites every key of the `counters` table; counters whose keys become one are added.
    private static func rewriteKeys(_ db: Database, _ rewrite: (String) -> String) throws(SQLiteError) {
        var rows: [String: (value: Double, histogram: String?)] = [:]
        for row in try db.query("SELECT key, value, histogram FROM counters") {
            let key = rewrite(row[0].textValue ?? "")
            let value = row[1].doubleValue ?? 0, histogram = row[2].textValue
            // Only counters merge (types that became `other`): no histogram has a free-text label.
            rows[key] = (value + (rows[key]?.value ?? 0), histogram ?? rows[key]?.histogram)
        }
        try db.run("DELETE FROM counters")
        for (key, row) in rows {
            try db.run("INSERT INTO counters (key, value, histogram) VALUES (?, ?, ?)",
                       [.text(key), .real(row.value), row.histogram.map { .text($0) } ?? .null])
        }
    }

    /// The series a key of the first form meant. Every label but `attributes_type` comes from a
    /// closed set without U+001F, so the closed values are the last ones and whatever stands
    /// before them was one attributes type. A type with a control character in it is `other`:
    /// ingest now refuses such types, and a label slot is no place for them. A key that fits
    /// no family is kept as it reads; the exposition leaves it out and counts it.
    public static func series(legacyKey: String) -> SeriesKey {
        let parts = legacyKey.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        let name = parts[0], values = Array(parts.dropFirst())
        guard let family = MonitorMetrics.persistedFamily(named: name),
              family.labels.first == "attributes_type", values.count >= family.labels.count
        else { return SeriesKey(name, values) }
        let type = values.dropLast(family.labels.count - 1).joined(separator: "\u{1F}")
        let closed = Array(values.suffix(family.labels.count - 1))
        return SeriesKey(name, [IdentifierText.hasControlCharacter(type) ? AttributesTypeLabels.other : type] + closed)
    }
}
