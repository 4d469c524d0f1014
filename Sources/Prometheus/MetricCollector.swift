/// Something that produces metric families at scrape time: an instrument, the process
/// collector, or the application's own view of its state.
public protocol MetricCollector: Sendable {
    /// The current families. Called on the scraping thread, once per scrape.
    func collect() -> [MetricFamily]
}
