import LiveActivityMonitor
import Prometheus

/// What must hold for any text stored as a series key in the `counters` table, read at start-up
/// (`SeriesKey.stored`) or repaired from the first key form (`CounterKeyMigrations`), on its way to
/// `/metrics`: the exposition never traps, writes one line per sample with every label value
/// escaped, and counts what it leaves out. And any label values, free text included, make a
/// key whose stored form reads back as the same key.
enum SeriesFuzzCheck {
    /// Longer inputs reach no more of this path (a key is a family and a few short values)
    /// and a whole exposition per input would take most of the fuzzer's time from the decoder.
    static let maxInput = 512

    static func run(_ bytes: [UInt8]) {
        guard bytes.count <= maxInput else { return }
        let text = String(decoding: bytes, as: UTF8.self)
        // The input's parts as label values for every persisted family (so that some keys fit).
        let values = text.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        var counters = MonitorCounters()
        counters.counters[SeriesKey.stored(text)] = 1
        counters.counters[CounterKeyMigrations.series(legacyKey: text)] = 2
        for family in MonitorMetrics.persistedCounters {
            let key = SeriesKey(family.name, Array(values.prefix(family.labels.count)))
            IngestFuzzCheck.require(SeriesKey(storageKey: key.storageKey) == key, "stored key \(key) does not read back")
            counters.counters[key, default: 0] += 3
        }
        let families = StoredFamilies.families(counters, types: Array(values.prefix(3)))
        let exposition = TextFormat.render(families)
        var samples = 0
        for line in exposition.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            IngestFuzzCheck.require(line.hasPrefix("# HELP liveactivity_") || line.hasPrefix("# TYPE liveactivity_")
                || line.hasPrefix("liveactivity_"), "a label value broke a line: \(line.prefix(200))")
            if !line.hasPrefix("#") { samples += 1 }
        }
        let skipped = families.reduce(0) { $0 + TextFormat.unrenderable($1) }
        IngestFuzzCheck.require(skipped == 0, "the collector passed \(skipped) unrenderable samples on")
        let unrenderable = counters.counters.keys.count { key in
            !MonitorMetrics.persistedCounters.contains { $0.name == key.family && $0.labels.count == key.labelValues.count }
        }
        IngestFuzzCheck.require(exposition.contains("liveactivity_unrenderable_series \(unrenderable)\n"),
                                "unrenderable_series does not count the \(unrenderable) series left out")
        IngestFuzzCheck.require(samples >= counters.counters.count - unrenderable, "a fitting series is missing")
    }
}
