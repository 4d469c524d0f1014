import Synchronization

/// The set of collectors behind one `/metrics` endpoint. Safe for concurrent use: collectors
/// may be registered and scrapes rendered from any thread.
///
/// Two families with the same name, from one collector or from two, are a programming error:
/// ``gather()`` and ``render()`` stop the process with a `precondition` naming the metric.
/// Metric names come from code and the set of collectors is fixed at startup, so the first
/// test that renders the registry finds the mistake; serving a silently truncated scrape would
/// hide it instead.
public final class Registry: Sendable {
    private let collectors = Mutex<[@Sendable () -> [MetricFamily]]>([])

    public init() {}

    /// Adds a collector, called once per scrape on the scraping thread.
    public func register(_ collect: @escaping @Sendable () -> [MetricFamily]) {
        collectors.withLock { $0.append(collect) }
    }

    /// Adds an instrument or any other ``MetricCollector``.
    public func register(_ collector: some MetricCollector) {
        register { collector.collect() }
    }

    /// Every collector's families, sorted by name (samples are left in collector order).
    public func gather() -> [MetricFamily] {
        // Collectors run outside the lock: they take their own locks and may be slow.
        let snapshot = collectors.withLock { $0 }
        let families = snapshot.flatMap { $0() }.sorted { $0.name < $1.name }
        for index in families.indices.dropFirst() {
            precondition(families[index - 1].name != families[index].name,
                         "two metric families named \"\(families[index].name)\" in the registry")
        }
        return families
    }

    /// The whole exposition in the text format (see ``TextFormat/contentType``).
    public func render() -> String {
        TextFormat.render(gather())
    }
}
