import LiveActivityWire
import Prometheus

/// The persisted counters and histograms as metric families, with `unrenderable_series`.
/// Their values come from the `counters` table, so nothing here trusts them: a series that
/// does not fit its family is left out and counted, never fatal (fuzzed by `ingest-fuzzer`).
public enum StoredFamilies {
    typealias M = MonitorMetrics

    /// Every persisted family; per-type families start at zero for each of `types`.
    public static func families(_ counters: MonitorCounters, types: [String]) -> [MetricFamily] {
        [unrenderableFamily(counters)]
            + M.persistedCounters.map { counterFamily($0, counters, types: types) }
            + M.persistedHistograms.map { histogramFamily($0, counters) }
    }

    /// Closed label sets start at zero so that rate() and alerts see the series from the first
    /// scrape; per-type families start at zero for every attributes type seen.
    private static func zeroSeries(_ family: M.Family, types: [String]) -> [[String]] {
        switch family.name {
        case M.pushesWithoutEffect.name: M.withoutEffectReasons.map { [$0.rawValue] }
        case M.ingestRejected.name: M.Rejection.allCases.map { [$0.rawValue] }
        case M.ingestEvents.name: EventType.allCases.map { [$0.rawValue] }
        case M.ingestDuplicates.name, M.ingestConflicts.name: [[]]
        case M.pushWarnings.name: EventEffect.Warning.allCases.map { [$0.name] }
        case M.tokensInvalidated.name: PushResult.invalidatingReasons.sorted().map { [$0] }
        case M.started.name: types.flatMap { t in StartSource.allCases.map { [t, $0.rawValue] } }
        case M.ended.name: types.flatMap { t in EndedBy.allCases.map { [t, $0.rawValue] } }
        case M.dismissed.name, M.staleTransitions.name, M.tokenRotations.name, M.pushToStartTokenRotations.name:
            types.map { [$0] }
        case M.pushDeliveries.name: EventEffect.Delivery.allCases.map { [$0.rawValue] }
        case M.pushToStart.name: [[EventEffect.StartOutcome.started.rawValue], [EventEffect.StartOutcome.notStarted.rawValue]]
        default: []
        }
    }

    private static func counterFamily(_ family: M.Family, _ counters: MonitorCounters, types: [String]) -> MetricFamily {
        // Keyed by SeriesKey, which compares label values by their bytes.
        var values: [SeriesKey: Double] = [:]
        for labels in zeroSeries(family, types: types) { values[SeriesKey(family.name, labels)] = 0 }
        for (key, value) in counters.counters where key.family == family.name && key.labelValues.count == family.labels.count {
            values[key] = value
        }
        let samples = values.map { key, value in
            Sample(labels: Labels(Array(zip(family.labels, key.labelValues))), value: .number(value))
        }
        return MetricFamily(name: family.name, help: family.help, type: .counter, samples: samples)
    }

    private static func histogramFamily(_ family: M.Family, _ counters: MonitorCounters) -> MetricFamily {
        var samples = counters.histograms.compactMap { key, value -> Sample? in
            guard key.family == family.name, key.labelValues.count == family.labels.count else { return nil }
            return Sample(labels: Labels(Array(zip(family.labels, key.labelValues))), value: .histogram(value))
        }
        // A family without labels has its one series from the first scrape.
        if family.labels.isEmpty, samples.isEmpty {
            samples = [Sample(labels: Labels([]), value: .histogram(HistogramValue(upperBounds: family.buckets)))]
        }
        return MetricFamily(name: family.name, help: family.help, type: .histogram, samples: samples)
    }

    /// Stored series that fit no family (a damaged or hand-edited counters table): left out of
    /// the exposition, never fatal, and counted here so that an alert can see them.
    private static func unrenderableFamily(_ counters: MonitorCounters) -> MetricFamily {
        let count = counters.counters.keys.count { !M.fits($0, M.persistedCounters) }
            + counters.histograms.keys.count { !M.fits($0, M.persistedHistograms) }
        return gauge(M.unrenderableSeries, [Sample(labels: Labels([]), value: .number(Double(count)))])
    }

    private static func gauge(_ family: M.Family, _ samples: [Sample]) -> MetricFamily {
        MetricFamily(name: family.name, help: family.help, type: .gauge, samples: samples)
    }
}
