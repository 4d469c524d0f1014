import LiveActivityWire
import Prometheus

/// The persisted counters and histograms, as one value: the writer changes a copy while it
/// builds a transaction and publishes it only after the commit.
public struct MonitorCounters: Sendable, Equatable {
    public var counters: [SeriesKey: Double] = [:]
    public var histograms: [SeriesKey: HistogramValue] = [:]

    public init() {}

    public mutating func inc(_ family: MonitorMetrics.Family, _ labels: String..., by amount: Double = 1) {
        precondition(labels.count == family.labels.count, "\(family.name) takes \(family.labels)")
        let key = SeriesKey(family.name, labels)
        counters[key, default: 0] += amount
    }

    /// Adds a histogram's observations to a series.
    mutating func merge(_ family: MonitorMetrics.Family, _ labels: String..., histogram: HistogramValue) {
        precondition(labels.count == family.labels.count, "\(family.name) takes \(family.labels)")
        histograms[SeriesKey(family.name, labels), default: HistogramValue(upperBounds: family.buckets)].merge(histogram)
    }

    /// Adds one observation to a histogram series.
    mutating func observe(_ family: MonitorMetrics.Family, _ value: Double) {
        precondition(family.labels.isEmpty, "\(family.name) takes \(family.labels)")
        histograms[SeriesKey(family.name, []), default: HistogramValue(upperBounds: family.buckets)].observe(value)
    }

    public func value(_ family: MonitorMetrics.Family, _ labels: String...) -> Double {
        counters[SeriesKey(family.name, labels)] ?? 0
    }

    /// The series whose value differs from `old`, and those `old` had that are gone
    /// (`removeSeries(ofTypes:)`): what a commit must write, or delete. Compared once per
    /// commit rather than tracked per increment (a set insert per event cost more).
    func changedSeries(since old: MonitorCounters) -> [SeriesKey] {
        counters.compactMap { old.counters[$0.key] == $0.value ? nil : $0.key }
            + histograms.compactMap { old.histograms[$0.key] == $0.value ? nil : $0.key }
            + old.counters.keys.filter { counters[$0] == nil } + old.histograms.keys.filter { histograms[$0] == nil }
    }

    /// Whether `key` is a series here (a key `changedSeries` reports that is not has ended).
    func holds(_ key: SeriesKey) -> Bool { counters[key] != nil || histograms[key] != nil }

    /// Takes out every series of the given attributes types and returns them: types that have
    /// no label of their own any more, so that the label keeps its 50 values (DESIGN.md section 5).
    mutating func removeSeries(ofTypes types: Set<ExactString>) -> MonitorCounters {
        var removed = MonitorCounters()
        guard !types.isEmpty else { return removed }
        for key in counters.keys where Self.attributesType(of: key).map(types.contains) == true {
            removed.counters[key] = counters.removeValue(forKey: key)
        }
        return removed
    }

    /// The attributes type a series of a per-type family counts (nil for other families).
    /// Only counters have the label: no histogram has a free-text one.
    static func attributesType(of key: SeriesKey) -> ExactString? {
        guard let family = MonitorMetrics.persistedFamily(named: key.family), family.labels.first == "attributes_type",
              key.labelValues.count == family.labels.count else { return nil }
        return ExactString(key.labelValues[0])
    }

    /// Adds another set of counts (used to fold pending in-memory counts into a commit).
    mutating func add(_ other: MonitorCounters) {
        for (key, value) in other.counters {
            counters[key, default: 0] += value
        }
        for (key, value) in other.histograms {
            if histograms[key] == nil { histograms[key] = value } else { histograms[key]!.merge(value) }
        }
    }

    public static func == (a: MonitorCounters, b: MonitorCounters) -> Bool {
        a.counters == b.counters && a.histograms == b.histograms
    }
}

/// The counters that follow events' effects, tallied through a commit and added to its counters
/// once (`add(to:)`): the one place they are counted (the engine decides the effect; nothing
/// tests its conditions again). A series key made per event cost more than the count.
struct EffectTally: Sendable {
    private var warnings: [(EventEffect.Warning, count: Double)] = []
    private var duplicates: Double = 0
    private var withoutEffect: [(EventEffect.Why, count: Double)] = []

    mutating func count(_ effect: EventEffect, of type: EventType) {
        for warning in effect.warnings { Self.tally(warning, in: &warnings) }
        switch effect.why {
        case .duplicate?:
            duplicates += 1
        case let why? where type == .pushSent && MonitorMetrics.withoutEffectReasons.contains(why):
            Self.tally(why, in: &withoutEffect)
        default:
            break
        }
    }

    private static func tally<T: Equatable>(_ value: T, in tally: inout [(T, count: Double)]) {
        if let i = tally.firstIndex(where: { $0.0 == value }) { tally[i].count += 1 } else { tally.append((value, 1)) }
    }

    /// Adds what was tallied to `counters`, and forgets it.
    mutating func add(to counters: inout MonitorCounters) {
        for (warning, count) in warnings { counters.inc(MonitorMetrics.pushWarnings, warning.name, by: count) }
        if duplicates > 0 { counters.inc(MonitorMetrics.ingestDuplicates, by: duplicates) }
        for (why, count) in withoutEffect { counters.inc(MonitorMetrics.pushesWithoutEffect, why.rawValue, by: count) }
        self = EffectTally()
    }
}
