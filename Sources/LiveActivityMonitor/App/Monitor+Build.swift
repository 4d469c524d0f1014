import HTTPServer
import Prometheus

/// Opens the store `configuration` names (`EventStore`: its SQLite file, durability, clock,
/// reserved attributes types) and builds the monitor over it. Binds no socket.
func buildMonitor(_ configuration: MonitorConfiguration) throws -> Monitor<EventStore> {
    let store = try EventStore(path: configuration.databasePath, durability: configuration.durability,
                               clock: configuration.clock, catchUpInterval: configuration.catchUpInterval,
                               reservedTypes: configuration.reservedTypes, declaredShapes: configuration.declaredShapes,
                               maxLiveActivities: configuration.maxLiveActivities,
                               settings: configuration.engine, log: configuration.log)
    return buildMonitor(configuration, store: store)
}

extension MonitorConfiguration {
    /// Attributes types with a series of their own whatever else happens: those listed and
    /// those the web root has a template for. Either store takes them.
    var reservedTypes: [String] { attributesTypes + MonitorServer.templateTypes(in: webRoot) }
    /// The content shapes the web root's templates declare.
    var declaredShapes: [String: ObjectShape] { MonitorServer.declaredShapes(in: webRoot, log: log) }
}

/// Builds the router and what it needs (registry, collector, handlers) over an open store: the
/// one place the monitor is wired, which `MonitorServer` and the tests share. The handlers take
/// the store as `any MonitorStore`, called a few times per request and never per event.
func buildMonitor<Store: MonitorStore>(_ configuration: MonitorConfiguration, store: Store) -> Monitor<Store> {
    let httpRequests = CounterVec(name: MonitorMetrics.httpRequests.name, help: MonitorMetrics.httpRequests.help,
                                  labelNames: MonitorMetrics.httpRequests.labels)
    let registry = Registry()
    let collector = MetricsCollector(store: store, priority10Budget: configuration.priority10Budget,
                                     version: MonitorServer.version, revision: BuildInfo.revision,
                                     httpRequests: httpRequests)
    registry.register { collector.collect() }
    let process = ProcessCollector()
    registry.register { process.collect() }

    var decoder = IngestDecoder()
    decoder.maxEvents = configuration.maxEventsPerRequest
    let loopback = LoopbackHost.isLoopback(address: configuration.host)
    let ingest = IngestHandler(store: store, decoder: decoder, token: configuration.ingestToken,
                               boundToLoopback: loopback)
    let router = Router(ingest: ingest,
                        reads: ReadHandlers(store: store, priority10Budget: configuration.priority10Budget),
                        staticFiles: StaticFiles(webRoot: configuration.webRoot),
                        registry: registry, store: store, readToken: configuration.readToken,
                        httpRequests: httpRequests, boundToLoopback: loopback)
    return Monitor(store: store, registry: registry, router: router)
}
