import JSON
import LiveActivityWire
import Prometheus

/// What both stores do alike when they rebuild memory from their tables (`EventStore.load`,
/// `PostgresStateLoader.loadServing`) and after each commit (`publish`): the rows differ, the state
/// they make does not.
extension MonitorState {
    /// A `content_shapes` row read back; nil when it no longer reads (edited by hand: the type
    /// is learned again from the next contents).
    static func storedShape(_ text: String?) -> ObjectShape? {
        guard case .object(let object)? = try? JSONParser.parse(text ?? ""),
              case .success(let shape) = ObjectShape.parse(object) else { return nil }
        return shape
    }

    /// Makes `records` (the live rows, read back) what memory holds, with the gauges counted
    /// from `now`: the table built at once, its deadline queue with it (`ActivityTable(loading:)`).
    mutating func load(records: consuming RecordStorage, priority10Budget: Int, gaugesFrom now: Double) {
        self.records = ActivityTable(loading: consume records, priority10Budget: priority10Budget, gaugesFrom: now)
        // The bulk build's sort buffers, freed, stay resident in glibc's heap (a million live
        // activities: about 25 MB) until a pass gives their pages back.
        FreedMemoryReturn.returnFreedPages()
    }

    /// Adds one `counters` row (a series key, its value, a histogram's "sum;bucket;…" text) and
    /// counts app starts per raw attributes type in `appStarts`, for `assignLabels`.
    mutating func loadCounter(key storageKey: String, value: Double, histogram: String?,
                              appStarts: inout [ExactString: Double]) {
        let key = SeriesKey.stored(storageKey)
        if let text = histogram, let family = MonitorMetrics.persistedHistograms.first(where: { $0.name == key.family }) {
            var h = HistogramValue(upperBounds: family.buckets)
            let parts = text.split(separator: ";")
            let buckets = parts.dropFirst().compactMap { UInt64($0) }
            if let sum = parts.first.flatMap({ Double($0) }), buckets.count == h.bucketCounts.count {
                h.sum = sum
                h.bucketCounts = buckets
            }
            counters.histograms[key] = h
        } else {
            counters.counters[key] = value
        }
        if MonitorMetrics.fits(key, [MonitorMetrics.started]), key.labelValues[1] == StartSource.app.rawValue {
            appStarts[ExactString(key.labelValues[0]), default: 0] += value
        }
    }

    /// The label slots once the records are loaded: `reserved` types, then app-reported types
    /// that live activities use, then the most started. The series of types left without a
    /// slot end (`droppedOnLoad`), as at run time (`expireLabels`).
    mutating func assignLabels(reserved: [String], appStarts: [ExactString: Double]) {
        let live = records.countByType()
        let candidates = appStarts.keys.sorted { a, b in
            let x = (live[a] ?? 0, appStarts[a]!), y = (live[b] ?? 0, appStarts[b]!)
            return x != y ? x > y : ExactText.precedes(a.text, b.text)
        }
        labels = AttributesTypeLabels(reserved: reserved, admitted: candidates.map(\.text))
        let unlabelled = Set(counters.counters.keys.compactMap(MonitorCounters.attributesType).filter { !labels.hasSeries($0) })
        droppedOnLoad = counters.removeSeries(ofTypes: unlabelled)
    }

    /// Makes a commit's changes what memory holds; its records are moved here (the commit's
    /// `working` is empty after).
    mutating func publish(_ changes: inout CommitChanges, at now: Double) {
        // First, so that the records below are counted as of the commit's time.
        records.advanceGauges(to: now)
        counters = changes.counters
        // A replay's shapes judge nothing: memory keeps the writer's.
        if changes.shapes.judging { shapes = changes.shapes }
        persisting = MonitorCounters()
        labels = changes.labels
        publish(changes.starts)
        channels = changes.channels
        var records = changes.takeWorking()
        while let record = records.popLast() { publish(consume record, now: now) }
        expireLabels(now: now)
    }
}
