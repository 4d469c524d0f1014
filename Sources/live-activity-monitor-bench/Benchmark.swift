import Foundation
import LiveActivityMonitor
import SQLiteDB

/// The phases of one run. Every server is a child process on a free port with its own
/// database in a temporary directory; each phase stops its servers before the next starts.
final class Benchmark {
    let options: BenchOptions
    let results: Results
    let directory: String
    /// Unix seconds at the start: datasets are placed relative to it.
    let unixNow = Date().timeIntervalSince1970
    private var children: [ChildProcess] = []

    init(options: BenchOptions, results: Results) throws {
        self.options = options
        self.results = results
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("lam-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func run() throws {
        if options.phases.contains("throughput") {
            log("throughput: \(options.rounds) rounds of \(options.seconds) s per server")
            try throughput()
        }
        if options.phases.contains("connections") {
            log("connections: \(options.idleConnections) idle keep-alive connections while 64 others post")
            try manyConnections()
        }
        if options.phases.contains("stages") {
            try stagesOnly()
        }
        if options.phases.contains("decode") {
            try decodeOnly()
        }
        if options.phases.contains("growth") {
            log("growth: \(options.liveCheckpoints.map { "\($0 * (1 + options.pushesPerActivity)) events" }.joined(separator: ", "))")
            try growth()
        }
        if options.phases.contains("broadcast") {
            log("broadcast: a 200 broadcast to \(options.broadcastSubscribers) subscribers")
            try broadcasts()
        }
        if options.phases.contains("postgres") {
            log("postgres: single-event and batched ingest against the PostgreSQL storage limit")
            try postgresThroughput()
        }
        if options.phases.contains("startup") {
            try startUp()
        }
        if options.phases.contains("scrape") {
            log("scrape cost against stored events: \(options.ratioLive) live activities, \(options.ratioEvents) events")
            try eventsOnlyScrape()
        }
        addTargets()
    }

    func cleanUp() {
        children.forEach { $0.stop() }
        children = []
        if options.keep {
            log("databases kept in \(directory)")
        } else {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    // MARK: Servers

    /// `executable`: a `live-activity-monitor` (or this bench) binary to run `serve` with, this one by default.
    func monitor(_ name: String, database: String, durability: Durability = .normal,
                 extra: [String] = [], executable: String = BenchRunner.executablePath) throws -> ChildProcess {
        let child = try ChildProcess.bench(name, executable: executable, arguments: [
            // A PostgreSQL URI or an absolute path as it is; a file name in the run's directory.
            "serve", "--port", "0", "--db", database.contains("://") || database.hasPrefix("/") ? database : directory + "/" + database,
            "--web-root", directory + "/no-web",
            "--durability", durability.rawValue,
        ] + extra)
        children.append(child)
        return child
    }

    func stop(_ child: ChildProcess) {
        child.stop()
        children.removeAll { $0 === child }
    }

    func log(_ message: String) {
        FileHandle.standardError.write(Data("bench: \(message)\n".utf8))
    }

    // MARK: Throughput

    /// Single-event ingest against the HTTP limit and Pushgateway; batched ingest against the
    /// storage limit. Round by round, so that each ratio compares neighbours in time.
    private func throughput() throws {
        let ours = try monitor("monitor", database: "throughput.sqlite")
        // Batched load on its own server, so that the single-event servers (normal and full)
        // grow their databases alike and compare with each other.
        let batched = try monitor("monitor-batched", database: "batched.sqlite")
        let full = options.fullDurability ? try monitor("monitor-full", database: "throughput-full.sqlite", durability: .full) : nil
        let library = try ChildProcess.bench("library-baseline", arguments: ["library-baseline"])
        children.append(library)
        let http = try ChildProcess.bench("http-baseline", arguments: ["http-baseline"])
        children.append(http)
        let peer = try Pushgateway.start()
        children.append(peer)

        // The activities the wrk scripts push to, started through the real path.
        let wrkSet = Dataset(prefix: "w", now: unixNow)
        let activities = options.wrkActivities
        for server in [ours, full, batched].compactMap({ $0 }) {
            try Populator(port: server.port).post(batches: (activities + 999) / 1000) { j in
                (j * 1000..<min(j * 1000 + 1000, activities)).map { wrkSet.start($0, age: 3600) }
            }
        }
        let storageLines = storageEvents()
        let storage = try StorageBaseline(path: directory + "/storage.sqlite", durability: .normal, events: storageLines)
        let stages = StageProfile(directory: directory, lines: Array(storageLines.prefix(options.storageRows / 4)),
                                  activities: activities, now: unixNow)
        var stageFigures: [StageProfile.Figures] = []

        let wrk = Wrk(seconds: options.seconds)
        let single = Wrk.script("single-event.lua"), batch = Wrk.script("ndjson-batch.lua")
        var httpRate: [Double] = [], singleRate: [Double] = [], fullRate: [Double] = [], peerRate: [Double] = []
        var libraryRate: [Double] = [], libraryCloseRate: [Double] = [], closeRate: [Double] = [], unstartedRate: [Double] = []
        var httpCloseRate: [Double] = []
        var batchRate: [Double] = [], storageRate: [Double] = []
        var writerCPUPerEvent: [Double] = [], writerCheckpointerCPUPerEvent: [Double] = []
        var storageCPUPerRow: [Double] = [], storageCheckpointerCPUPerRow: [Double] = [], writerEventsPerCommit: [Double] = []
        var singleCPU: [Double] = [], batchCPU: [Double] = [], httpCPU: [Double] = [], peerCPU: [Double] = []
        var wrkCPU: [String: [Double]] = [:], machineCPU: [String: [Double]] = [:]
        var acknowledged = 0
        for round in 1...options.rounds {
            let base = String(Int(unixNow) + round * 600)
            func load(_ server: ChildProcess, _ script: String, _ args: [String], cpu: inout [Double]) throws -> Wrk.Result {
                let before = server.cpuSeconds, machineBefore = Machine.cpuTimes()
                let result = try wrk.run(url: "http://127.0.0.1:\(server.port)", script: script, args)
                cpu.append((server.cpuSeconds - before) / Double(options.seconds) * 100)
                let machineAfter = Machine.cpuTimes()
                machineCPU[server.name + " " + script, default: []].append(
                    (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total) * 100)
                wrkCPU[server.name + " " + script, default: []].append(result.cpuSeconds / Double(options.seconds) * 100)
                server.waitUntilIdle()
                guard result.failures == 0 else {
                    throw BenchError("\(server.name): \(result.failures) failed requests\n\(result.output)\n\(server.output.contents.suffix(2000))")
                }
                return result
            }
            var unused: [Double] = []
            let wa = ["wa", String(activities), base]
            libraryRate.append(try load(library, single, ["l\(round)"] + wa, cpu: &unused).requestsPerSecond)
            httpRate.append(try load(http, single, ["h\(round)"] + wa, cpu: &httpCPU).requestsPerSecond)
            let s = try load(ours, single, ["s\(round)"] + wa, cpu: &singleCPU)
            singleRate.append(s.requestsPerSecond)
            acknowledged += s.requests
            // Activities never started ("wn…": no start was posted for them).
            let u = try load(ours, single, ["u\(round)", "wn", String(activities), base], cpu: &unused)
            unstartedRate.append(u.requestsPerSecond)
            acknowledged += u.requests
            // A connection per request, the library's own rate in the same round beside it.
            libraryCloseRate.append(try load(library, single, ["lc\(round)"] + wa + ["close"], cpu: &unused).requestsPerSecond)
            httpCloseRate.append(try load(http, single, ["hc\(round)"] + wa + ["close"], cpu: &unused).requestsPerSecond)
            let c = try load(ours, single, ["c\(round)"] + wa + ["close"], cpu: &unused)
            closeRate.append(c.requestsPerSecond)
            acknowledged += c.requests
            if let full {
                fullRate.append(try load(full, single, ["f\(round)", "wa", String(activities), base], cpu: &unused).requestsPerSecond)
            }
            peerRate.append(try load(peer, Wrk.script("pushgateway.lua"), ["wa", String(activities)], cpu: &peerCPU)
                .requestsPerSecond)
            let per = options.eventsPerBatch
            let batchedBefore = try storeProgress(port: batched.port)
            let writerBefore = batched.threadCPUSeconds(named: "store-writer")
            let checkpointerBefore = batched.threadCPUSeconds(named: "checkpointer")
            let b = try load(batched, batch, ["b\(round)", "wa", String(activities), base, String(per)], cpu: &batchCPU)
            batchRate.append(b.requestsPerSecond * Double(per))
            acknowledged += b.requests * per
            // The writer's CPU over the load (and the commits wrk left behind, `waitUntilIdle`),
            // its thread only, as the storage limit's inserting thread; each one's background
            // checkpointer beside it, apart.
            let events = Double(b.requests * per)
            writerCPUPerEvent.append((batched.threadCPUSeconds(named: "store-writer") - writerBefore) / events * 1e6)
            writerCheckpointerCPUPerEvent.append((batched.threadCPUSeconds(named: "checkpointer") - checkpointerBefore) / events * 1e6)
            // The storage limit stores what this round stored, from the size the batched
            // server's file had before it (filled to it, untimed), in transactions of the
            // writer's mean commit: SQLite's cost per row grows with the file and depends on the
            // commit size, so both are measured alike.
            let batchedRound = try storeProgress(port: batched.port).since(batchedBefore)
            writerEventsPerCommit.append(Double(batchedRound.eventsPerCommit))
            try storage.fill(to: batchedBefore.events)
            let inserted = try storage.insert(batchedRound.events, perTransaction: batchedRound.eventsPerCommit)
            storageRate.append(inserted.rowsPerSecond)
            storageCPUPerRow.append(inserted.cpuMicrosecondsPerRow)
            storageCheckpointerCPUPerRow.append(inserted.checkpointerCPUMicrosecondsPerRow)
            stageFigures.append(try stages.run())
            log("round \(round): libmicrohttpd \(Int(libraryRate.last!)) req/s, our HTTPServer \(Int(httpRate.last!)) req/s, "
                + "single \(Int(singleRate.last!)) ev/s, never started \(Int(unstartedRate.last!)) ev/s, "
                + "Connection: close \(Int(closeRate.last!)) ev/s (libmicrohttpd \(Int(libraryCloseRate.last!)) req/s)"
                + (full != nil ? " (full \(Int(fullRate.last!)))" : "")
                + ", pushgateway \(Int(peerRate.last!)) push/s, batched \(Int(batchRate.last!)) ev/s, storage \(Int(storageRate.last!)) rows/s")
        }
        // Every acknowledged event must be stored (a few more may be: wrk stops mid-request).
        let stored = try storedEvents(port: ours.port) + storedEvents(port: batched.port) - 2 * activities
        guard stored >= acknowledged else {
            throw BenchError("the monitor acknowledged \(acknowledged) events but stored \(stored)")
        }
        results.add("http_limit", "HTTP limit: libmicrohttpd alone (fixed 200, epoll, same thread pool)", "req/s", libraryRate)
        results.add("http_server", "our HTTPServer (fixed 200, same settings)", "req/s", httpRate)
        results.add("single", "single-event ingest (durability normal)", "events/s", singleRate)
        results.add("single_unstarted", "single-event ingest, never-started activities", "events/s", unstartedRate)
        results.add("http_limit_close", "HTTP limit, Connection: close on every request", "req/s", libraryCloseRate)
        results.add("http_server_close", "our HTTPServer (fixed 200), Connection: close on every request", "req/s", httpCloseRate)
        results.add("single_close", "single-event ingest, Connection: close on every request", "events/s", closeRate)
        if full != nil { results.add("single_full", "single-event ingest (durability full)", "events/s", fullRate) }
        results.add("pushgateway", "Pushgateway 1.5 (in memory)", "pushes/s", peerRate)
        results.add("batched", "batched ingest (NDJSON, \(options.eventsPerBatch) per request)", "events/s", batchRate)
        results.add("writer_events_per_commit", "batched ingest's events per commit (the storage limit's transaction)", "events", writerEventsPerCommit)
        results.add("storage_limit", "storage limit (prepared inserts, the writer's commit size)", "rows/s", storageRate)
        results.add("cpu_writer_event", "store writer CPU per event, batched load (writer thread)", "µs", writerCPUPerEvent)
        results.add("cpu_writer_checkpointer_event", "  its background checkpointer's thread, CPU per event", "µs", writerCheckpointerCPUPerEvent)
        results.add("cpu_storage_row", "storage limit CPU per row (inserting thread)", "µs", storageCPUPerRow)
        results.add("cpu_storage_checkpointer_row", "  its background checkpointer's thread, CPU per row", "µs", storageCheckpointerCPUPerRow)
        addStageFigures(stageFigures)
        results.add("cpu_http", "our HTTPServer (fixed 200) CPU under load", "% of 1 core", httpCPU)
        results.add("cpu_single", "monitor CPU, single-event load", "% of 1 core", singleCPU)
        results.add("cpu_batched", "monitor CPU, batched load", "% of 1 core", batchCPU)
        results.add("cpu_pushgateway", "Pushgateway CPU under load", "% of 1 core", peerCPU)
        results.add("cpu_wrk_http", "wrk CPU, loading the HTTP limit", "% of 1 core", wrkCPU["http-baseline " + single] ?? [])
        results.add("cpu_wrk_single", "wrk CPU, single-event load", "% of 1 core", wrkCPU["monitor " + single] ?? [])
        results.add("cpu_wrk_batched", "wrk CPU, batched load", "% of 1 core", wrkCPU["monitor-batched " + batch] ?? [])
        results.add("cpu_machine_http", "machine busy, loading the HTTP limit", "% of all CPUs", machineCPU["http-baseline " + single] ?? [])
        results.add("cpu_machine_single", "machine busy, single-event load", "% of all CPUs", machineCPU["monitor " + single] ?? [])
        results.add("cpu_machine_batched", "machine busy, batched load", "% of all CPUs", machineCPU["monitor-batched " + batch] ?? [])
        results.notes.append("acknowledged \(acknowledged) events in the normal-durability runs; \(stored) stored")
        if let slowest = libraryRate.min(), let fastest = libraryRate.max(), slowest > 0, fastest / slowest > 1.5 {
            // Seen on shared VMs: whole rounds where the fixed-200 server idles part of the machine.
            let againstFastest = Stats.median(singleRate) / fastest
            results.notes.append("the HTTP limit varied \(Int(slowest))–\(Int(fastest)) req/s between rounds: "
                                 + "the single-event ratio moves with it (its rounds are in the target's detail); "
                                 + "against the fastest round the single-event median is "
                                 + String(format: "%.2f", againstFastest))
        }
        for child in [ours, full, batched, library, http, peer].compactMap({ $0 }) { stop(child) }
    }

    // MARK: Many connections

    /// Item 4 of issue 23: the single-event load (64 keep-alive connections) round by round
    /// without, then with `idleConnections` idle keep-alive connections held open beside it:
    /// no error, the posting clients' p99 latency with against without, and the server's
    /// resident memory growth for the idle ones.
    private func manyConnections() throws {
        let idleCount = options.idleConnections
        let server = try monitor("monitor-connections", database: "connections.sqlite",
                                 extra: ["--max-connections", String(idleCount + 512)])
        defer { stop(server) }
        let data = Dataset(prefix: "w", now: unixNow)
        let activities = options.wrkActivities
        try Populator(port: server.port).post(batches: (activities + 999) / 1000) { j in
            (j * 1000..<min(j * 1000 + 1000, activities)).map { data.start($0, age: 3600) }
        }
        let wrk = Wrk(seconds: options.seconds)
        let single = Wrk.script("single-event.lua")
        var plain: [Double] = [], withIdle: [Double] = [], growth: [Double] = []
        for round in 1...options.rounds {
            let base = String(Int(unixNow) + round * 600)
            func load(_ run: String) throws -> Double {
                let result = try wrk.run(url: "http://127.0.0.1:\(server.port)", script: single, [run, "wa", String(activities), base])
                server.waitUntilIdle()
                guard result.failures == 0, let p99 = result.p99Seconds else {
                    throw BenchError("\(server.name): \(result.failures) failed requests\n\(result.output)")
                }
                return p99 * 1000
            }
            plain.append(try load("cp\(round)"))
            let before = Double(server.memoryBytes("VmRSS") ?? 0)
            let idle = try IdleConnections(count: idleCount, port: server.port)
            growth.append((Double(server.memoryBytes("VmRSS") ?? 0) - before) / 1e6)
            withIdle.append(try load("ci\(round)"))
            try idle.probe(every: 250)   // still open, still served
            idle.close()
            log("round \(round): p99 \(Results.format(plain.last!)) ms, with \(idleCount) idle \(Results.format(withIdle.last!)) ms; "
                + "resident memory +\(Results.format(growth.last!)) MB")
        }
        results.add("p99_plain", "single-event p99 latency, 64 connections", "ms", plain)
        results.add("p99_idle", "same, \(idleCount) idle keep-alive connections open beside", "ms", withIdle)
        results.add("rss_idle", "resident memory growth for \(idleCount) idle connections", "MB", growth)
    }

    /// The stage profile and the storage limit alone, for profiling the ingest path quickly.
    /// Each round the storage limit, like the store stage, starts on a new file holding as many
    /// rows as the store's starts, then stores the same events (files of the same sizes, as in
    /// the throughput phase), under keys of its own beside the throughput phase's.
    private func stagesOnly() throws {
        let lines = storageEvents()
        let rows = try StorageBaseline.rows(lines)
        let stages = StageProfile(directory: directory, lines: lines, activities: options.wrkActivities, now: unixNow)
        var stageFigures: [StageProfile.Figures] = []
        var storageRate: [Double] = [], storageCPU: [Double] = [], storageCheckpointer: [Double] = []
        for round in 1...options.rounds {
            stageFigures.append(try stages.run())
            let path = directory + "/storage-stages-\(round).sqlite"
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            let storage = try StorageBaseline(path: path, durability: .normal, rows: rows)
            try storage.fill(to: options.wrkActivities)
            let inserted = try storage.insertAll(perTransaction: StageProfile.eventsPerCommit)
            storageRate.append(inserted.rowsPerSecond)
            storageCPU.append(inserted.cpuMicrosecondsPerRow)
            storageCheckpointer.append(inserted.checkpointerCPUMicrosecondsPerRow)
        }
        addStageFigures(stageFigures)
        results.add("stage_storage_limit", "  stage: storage limit (prepared inserts, \(StageProfile.eventsPerCommit)/txn)", "rows/s", storageRate)
        results.add("stage_storage_cpu_row", "  stage: storage limit CPU per row (inserting thread)", "µs", storageCPU)
        results.add("stage_storage_checkpointer_row", "  stage: its background checkpointer's thread, CPU per row", "µs", storageCheckpointer)
    }

    /// The batched script's events, for the storage limit and the stage profile.
    private func storageEvents() -> [String] {
        (0..<options.storageRows).map {
            Dataset.wrkEvent(run: "st", counter: $0 + 1, activityPrefix: "wa", activities: options.wrkActivities, base: unixNow)
        }
    }

    /// Single-object decoding alone (no database): the quick figure for the decoder's fast path,
    /// and a short run to profile (`--quick --only decode` under callgrind).
    private func decodeOnly() throws {
        let stages = StageProfile(directory: directory, lines: Array(storageEvents().prefix(options.storageRows / 4)),
                                  activities: options.wrkActivities, now: unixNow)
        var singleDecodeRate: [Double] = []
        for _ in 1...options.rounds {
            singleDecodeRate.append(try stages.decodeSingles() / Double(stages.lines.count) * 1e6)
        }
        results.add("stage_decode_single", "  stage: decode one object per body, CPU per event", "µs", singleDecodeRate)
    }

    private func addStageFigures(_ rounds: [StageProfile.Figures]) {
        results.add("stage_decode", "  stage: decode, CPU per event (no HTTP)", "µs", rounds.map(\.decode))
        results.add("stage_decode_single", "  stage: decode one object per body, CPU per event", "µs", rounds.map(\.decodeSingle))
        results.add("stage_store", "  stage: store, \(StageProfile.eventsPerCommit)/commit, CPU per event", "µs", rounds.map(\.store))
        results.add("stage_store_writer", "  stage: store, its writer thread's CPU per event", "µs", rounds.map(\.storeWriter))
    }

    /// `liveactivity_ingest_events_total`, summed over types.
    func storedEvents(port: Int) throws -> Int {
        try storeProgress(port: port).events
    }

    /// A server's stored events and its store's commits so far, from one scrape
    /// (`liveactivity_ingest_events_total`, `liveactivity_store_commit_seconds_count`).
    func storeProgress(port: Int) throws -> StoreProgress {
        let lines = try HTTPProbe.text(port: port, path: "/metrics").split(separator: "\n")
        func sum(_ prefix: String) -> Int {
            lines.filter { $0.hasPrefix(prefix) }
                .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0) { $0 + Int($1) }
        }
        return StoreProgress(events: sum("liveactivity_ingest_events_total{"),
                             commits: sum("liveactivity_store_commit_seconds_count "))
    }

    // MARK: Growth

    /// Loads live activities (a start and 9 pushes each) up to each checkpoint, measuring the
    /// reads there; then restarts on the largest database for start-up, reads and peak memory;
    /// then compares ingest there with ingest at the comparison size (`ingestByFleetSize`).
    private func growth() throws {
        var server = try monitor("monitor", database: "growth.sqlite")
        let data = Dataset(prefix: "g", now: unixNow, ids: options.ids)
        let pushes = options.pushesPerActivity
        let checkpoints = options.liveCheckpoints
        let comparedLive = options.comparedLive
        var loaded = 0
        for live in checkpoints {
            let rate = try load(data, activities: loaded..<live, port: server.port) { 7200 - Double($0) * 0.01 }
            loaded = live
            if live == comparedLive, live != checkpoints.last {
                try Database(path: directory + "/growth.sqlite", mode: .readOnly)
                    .run("VACUUM INTO ?", [.text(directory + "/growth-compared.sqlite")])
            }
            let reads = try probeReads(server, data: data, live: live)
            results.growth.append(.init(events: live * (1 + pushes), liveActivities: live, ingestEventsPerSecond: rate,
                                        scrapeMs: reads.scrape * 1000, bookingMs: reads.booking * 1000,
                                        listMs: reads.list * 1000, triageMs: reads.triage * 1000,
                                        residentMB: Double(server.memoryBytes("VmRSS") ?? 0) / 1e6))
            log("\(live * (1 + pushes)) events, \(live) live: ingest \(Int(rate)) ev/s, scrape \(Results.format(reads.scrape * 1000)) ms")
        }
        let loadingPeak = Double(server.memoryBytes("VmHWM") ?? 0) / 1e6
        stop(server)

        server = try monitor("monitor", database: "growth.sqlite")
        let startUp = server.startSeconds
        let reads = try probeReads(server, data: data, live: loaded)
        let peak = Double(server.memoryBytes("VmHWM") ?? 0) / 1e6
        stop(server)
        let events = loaded * (1 + pushes)
        results.add("startup", "start-up until /-/ready (\(events) events, \(loaded) live)", "s", [startUp])
        results.add("scrape", "/metrics scrape, \(loaded) live activities", "ms", [reads.scrape * 1000])
        results.add("booking", "/api/bookings/{id}, \(events) events", "ms", [reads.booking * 1000])
        results.add("list", "/api/activities?limit=100, \(loaded) live", "ms", [reads.list * 1000])
        results.add("triage", "/api/triage, \(loaded) live", "ms", [reads.triage * 1000])
        results.add("peak_rss", "peak RSS after restart, start-up + reads", "MB", [peak])
        results.add("peak_rss_loading", "peak RSS of the process that ingested them", "MB", [loadingPeak])
        if loaded != comparedLive {
            try scrapeByFleetSize(largest: loaded, compared: comparedLive)
            try ingestByFleetSize(data, largest: loaded, compared: comparedLive)
        }
    }

    /// `/metrics` at the largest fleet against at `compared` live, scraped alternately, request
    /// by request, each round by a new pair of processes (as `eventsOnlyScrape`): the growth
    /// table's scrapes are minutes apart, and two runs of one build put their ratio at 0.59 ×
    /// and 2.00 × (PERFORMANCE.md, session 32), then 1.11 × and 1.66 × (session 33).
    private func scrapeByFleetSize(largest: Int, compared: Int) throws {
        var largestTimes: [Double] = [], comparedTimes: [Double] = []
        for _ in 1...options.rounds {
            let copy = "growth-compared-scrape.sqlite"
            try? FileManager.default.removeItem(atPath: directory + "/" + copy)
            try FileManager.default.copyItem(atPath: directory + "/growth-compared.sqlite", toPath: directory + "/" + copy)
            let large = try monitor("monitor-large", database: "growth.sqlite")
            let small = try monitor("monitor-small", database: copy)
            defer { stop(large); stop(small) }
            large.waitUntilIdle()
            small.waitUntilIdle()
            let (a, b) = try HTTPProbe.alternatingMedians(ports: (large.port, small.port), count: options.probes, path: "/metrics")
            largestTimes.append(a * 1000)
            comparedTimes.append(b * 1000)
        }
        results.add("scrape_fleet_largest", "/metrics, \(largest) live, alternating with \(compared) live", "ms", largestTimes)
        results.add("scrape_fleet_compared", "/metrics, \(compared) live, alternating with \(largest) live", "ms", comparedTimes)
    }

    /// Posts `activities` of `data` (a start and the pushes each, NDJSON, 4 clients) to the
    /// server on `port`, activity `i` started `age(i)` seconds ago; events per second.
    private func load(_ data: Dataset, activities: Range<Int>, port: Int,
                      age: @escaping @Sendable (Int) -> Double) throws -> Double {
        let pushes = options.pushesPerActivity
        let perBatch = 1000 / (1 + pushes)
        return try Populator(port: port).post(batches: (activities.count + perBatch - 1) / perBatch) { j in
            let lo = activities.lowerBound + j * perBatch
            return (lo..<min(lo + perBatch, activities.upperBound)).flatMap {
                data.activity($0, pushes: pushes, age: age($0))
            }
        }
    }

    /// Ingest at the largest fleet against ingest at `compared` live, round by round in
    /// alternating order: each round starts a server on each file and posts the same number of
    /// new activities to both, then SQLite alone stores as many more on the same file (the
    /// storage limit, `newActivities`). The loading rates of the growth table are minutes apart
    /// on a shared host (their ratio swung 0.77–1.12 × between runs of one build). The compared
    /// file is copied afresh each round, so it stays at its size; the largest grows by about 2 %
    /// a round. The ids continue the growth's, so every round's are new to both files.
    private func ingestByFleetSize(_ data: Dataset, largest: Int, compared: Int) throws {
        let perRound = options.quick ? 300 : 10_000
        log("ingest at \(largest) live against \(compared) live: \(options.rounds) rounds of \(perRound) new activities each")
        // Each figure's rounds by its results key ("ingest_largest", …); CPU per event and per
        // row as well as rates: steadier on a shared host.
        var figures: [String: [Double]] = [:]
        var next = largest
        for round in 0..<options.rounds {
            let copy = "growth-compared-round.sqlite"
            try? FileManager.default.removeItem(atPath: directory + "/" + copy)
            try FileManager.default.copyItem(atPath: directory + "/growth-compared.sqlite", toPath: directory + "/" + copy)
            for onLargest in round % 2 == 0 ? [true, false] : [false, true] {
                let file = onLargest ? "growth.sqlite" : copy
                let (rate, writerCPU, eventsPerCommit) = try ingest(data, activities: next..<next + perRound, into: file)
                next += perRound
                // The physical limit on the same file, once the server has stopped: SQLite
                // storing the same kind of rows (new activities' rows, events, their index) in
                // transactions of the writer's mean commit.
                let storage = try StorageBaseline(path: directory + "/" + file, durability: .normal,
                                                  events: (next..<next + perRound).flatMap {
                                                      data.activity($0, pushes: options.pushesPerActivity, age: 3600)
                                                  }, newActivities: true).insertAll(perTransaction: eventsPerCommit)
                next += perRound
                let side = onLargest ? "largest" : "compared"
                figures["ingest_" + side, default: []].append(rate)
                figures["cpu_writer_" + side, default: []].append(writerCPU)
                figures["storage_" + side, default: []].append(storage.rowsPerSecond)
                figures["cpu_storage_" + side, default: []].append(storage.cpuMicrosecondsPerRow)
                log("round \(round + 1), \(onLargest ? largest : compared) live: ingest \(Int(rate)) ev/s, writer "
                    + "\(Results.format(writerCPU)) µs an event; SQLite alone \(Int(storage.rowsPerSecond)) rows/s, "
                    + "\(Results.format(storage.cpuMicrosecondsPerRow)) µs a row")
            }
        }
        let what = "new activities, a start and \(options.pushesPerActivity) pushes each, a new server each round"
        for (side, live) in [("largest", largest), ("compared", compared)] {
            results.add("ingest_" + side, "ingest at \(live) live (\(what))", "events/s", figures["ingest_" + side]!)
            results.add("cpu_writer_" + side, "store writer CPU per event at \(live) live (the same rounds)", "µs", figures["cpu_writer_" + side]!)
            results.add("storage_" + side, "storage limit at \(live) live (SQLite alone: the same kind of rows on the same file, "
                        + "after the server)", "rows/s", figures["storage_" + side]!)
            results.add("cpu_storage_" + side, "storage limit CPU per row at \(live) live", "µs", figures["cpu_storage_" + side]!)
        }
    }

    /// Posts new `activities` to a new server on `file`: events per second, the store writer's
    /// CPU per event, and its mean events per commit.
    private func ingest(_ data: Dataset, activities: Range<Int>, into file: String)
        throws -> (rate: Double, writerCPU: Double, eventsPerCommit: Int) {
        let server = try monitor("monitor", database: file)
        defer { stop(server) }
        let writerBefore = server.threadCPUSeconds(named: "store-writer")
        let before = try storeProgress(port: server.port)
        let rate = try load(data, activities: activities, port: server.port) { 3600 - Double($0 - activities.lowerBound) * 0.01 }
        let events = Double(activities.count * (1 + options.pushesPerActivity))
        return (rate, (server.threadCPUSeconds(named: "store-writer") - writerBefore) / events * 1e6,
                try storeProgress(port: server.port).since(before).eventsPerCommit)
    }

    /// The reads' medians once the server is idle: right after a load its writer is still
    /// writing rows behind and checkpointing, and took the scrape's ratio between sizes from
    /// 0.59 × to 2.00 × in two runs of one build (PERFORMANCE.md, session 32).
    private func probeReads(_ server: ChildProcess, data: Dataset, live: Int)
        throws -> (scrape: Double, booking: Double, list: Double, triage: Double) {
        server.waitUntilIdle()
        let n = options.probes
        let scrape = try HTTPProbe.medianSeconds(port: server.port, count: n) { _ in "/metrics" }.median
        let booking = try HTTPProbe.medianSeconds(port: server.port, count: n) { i in
            "/api/bookings/\(data.bookingID((i * 7919 + 13) % live))"
        }.median
        let list = try HTTPProbe.medianSeconds(port: server.port, count: n) { _ in "/api/activities?limit=100" }.median
        // The dashboard's "Needs a look" poll, at its default limit.
        let triage = try HTTPProbe.medianSeconds(port: server.port, count: n) { _ in "/api/triage" }.median
        return (scrape, booking, list, triage)
    }

    // MARK: Scrape against stored events

    /// The same live activities on two servers, with the same kinds of history (activities
    /// started 16 h ago, so ended and dismissed, which adds their counters' series): one at
    /// `ratioSmallEvents` events in all, one at `ratioEvents`. Each activity is a start and 9
    /// pushes. Scraped alternately, request by request, and each round by a new pair of
    /// processes on the same files: one process can stay 40 % faster than another for its
    /// whole life (where its memory landed), which with the same two processes in every round
    /// moved the ratio from 0.64 to 1.23 between runs.
    private func eventsOnlyScrape() throws {
        let files = ["scrape-small.sqlite", "scrape-large.sqlite"]
        let data = Dataset(prefix: "r", now: unixNow)
        let live = options.ratioLive
        for (file, events) in zip(files, [options.ratioSmallEvents, options.ratioEvents]) {
            let server = try monitor("monitor-loading", database: file)
            defer { stop(server) }
            let end = events / 10
            try Populator(port: server.port).post(batches: (end + 99) / 100) { j in
                (j * 100..<min(j * 100 + 100, end)).flatMap { i in
                    i < live ? data.activity(i, pushes: 9, age: 3600 - Double(i) * 0.01) : data.activity(i, pushes: 9, age: 16 * 3600)
                }
            }
            server.waitUntilIdle()
        }
        var smallTimes: [Double] = [], largeTimes: [Double] = []
        for _ in 1...options.rounds {
            let small = try monitor("monitor-small", database: files[0])
            let large = try monitor("monitor-large", database: files[1])
            defer { stop(small); stop(large) }
            let (a, b) = try HTTPProbe.alternatingMedians(ports: (small.port, large.port), count: options.probes, path: "/metrics")
            smallTimes.append(a * 1000)
            largeTimes.append(b * 1000)
        }
        results.add("scrape_small", "/metrics, \(live) live, \(options.ratioSmallEvents) events", "ms", smallTimes)
        results.add("scrape_large", "/metrics, \(live) live, \(options.ratioEvents) events", "ms", largeTimes)
    }

    // MARK: Targets

    private func addTargets() {
        let r = results
        /// Each round's ratio, so that a median near the line shows how the rounds spread.
        func perRound(_ a: String, _ b: String) -> String {
            let ratios = r.roundRatios(a, b)
            return ratios.isEmpty ? "" : "; rounds " + ratios.map { String(format: "%.2f", $0) }.joined(separator: " ")
        }
        func against(_ a: String, _ b: String, _ units: (String, String)) -> String {
            "\(Results.format(r.median(a))) \(units.0) vs \(Results.format(r.median(b))) \(units.1)" + perRound(a, b)
        }
        // The start-up phase's file (1,000,000 live by default) when it ran, else the growth phase's.
        let startUp = r.median("startup_wall_ours").isNaN
            ? (seconds: r.median("startup"), detail: "the growth phase's file")
            : (seconds: r.median("startup_wall_ours"), detail: "\(options.startupLive) live, CPU \(Results.format(r.median("startup_cpu_ours"))) s")
        // The restarted server's reads are of the growth phase's largest file: issue 24's targets
        // at 1,000,000 live with --million, the earlier ones at 100,000 otherwise.
        let atMillion = r.growth.first { $0.liveActivities == 1_000_000 }
        let servingAtMillion = atMillion?.residentMB ?? .nan
        let largest = options.million ? "1M live + 10M events" : "100k live + 1M events"
        r.targets = [
            .init(label: "our HTTPServer fixed 200 / libmicrohttpd fixed 200", measured: r.pairedRatio("http_server", "http_limit"),
                  limit: 0.90, atLeast: true, detail: against("http_server", "http_limit", ("req/s", "req/s"))),
            .init(label: "single-event ingest / HTTP limit", measured: r.pairedRatio("single", "http_limit"), limit: 0.30,
                  atLeast: true, detail: against("single", "http_limit", ("ev/s", "req/s"))),
            .init(label: "single-event ingest, never-started activities / HTTP limit",
                  measured: r.pairedRatio("single_unstarted", "http_limit"), limit: 0.28,
                  atLeast: true, detail: against("single_unstarted", "http_limit", ("ev/s", "req/s"))),
            .init(label: "Connection: close ingest / HTTP limit with Connection: close",
                  measured: r.pairedRatio("single_close", "http_limit_close"), limit: 0.85,
                  atLeast: true, detail: against("single_close", "http_limit_close", ("ev/s", "req/s"))),
            .init(label: "single-event ingest / Pushgateway", measured: r.pairedRatio("single", "pushgateway"), limit: 20,
                  atLeast: true, detail: "vs \(Results.format(r.median("pushgateway"))) pushes/s"),
            .init(label: "batched ingest / storage limit", measured: r.pairedRatio("batched", "storage_limit"), limit: 0.70,
                  atLeast: true, detail: "\(Results.format(r.median("batched"))) ev/s vs \(Results.format(r.median("storage_limit"))) rows/s"
                    + perRound("batched", "storage_limit")),
            .init(label: "writer CPU per event / storage limit CPU per row", measured: r.pairedRatio("cpu_writer_event", "cpu_storage_row"),
                  limit: 1.3, atLeast: false, detail: against("cpu_writer_event", "cpu_storage_row", ("µs", "µs"))),
            .init(label: "p99 with \(options.idleConnections) idle connections / without", measured: r.pairedRatio("p99_idle", "p99_plain"),
                  limit: 2, atLeast: false, detail: against("p99_idle", "p99_plain", ("ms", "ms"))
                    + "; resident memory +\(Results.format(r.median("rss_idle"))) MB"),
            .init(label: "/metrics, \(largest), ms", measured: r.median("scrape"), limit: 10, atLeast: false,
                  detail: "median of \(options.probes)"),
            .init(label: "/metrics at 1M events / at 10k events", measured: r.pairedRatio("scrape_large", "scrape_small"),
                  limit: 1.2, atLeast: false,
                  detail: "\(Results.format(r.median("scrape_large"))) ms vs \(Results.format(r.median("scrape_small"))) ms"),
            .init(label: "/api/bookings/{id}, \(largest), ms", measured: r.median("booking"), limit: 5, atLeast: false,
                  detail: "median of \(options.probes), 10 events each"),
            .init(label: "/api/activities?limit=100, \(largest), ms", measured: r.median("list"), limit: 20, atLeast: false,
                  detail: "median of \(options.probes)"),
            .init(label: "peak RSS after restart, \(largest), MB", measured: r.median("peak_rss"), limit: options.million ? 350 : 150, atLeast: false,
                  detail: "VmHWM of the restarted server"),
            .init(label: "resident memory while serving, 1M live, MB", measured: servingAtMillion, limit: 450, atLeast: false,
                  detail: "VmRSS of the server that ingested them"),
            .init(label: "/metrics at \(Self.short(options.liveCheckpoints.last!)) live / at \(Self.short(options.comparedLive)) live",
                  measured: r.pairedRatio("scrape_fleet_largest", "scrape_fleet_compared"), limit: 1.5, atLeast: false,
                  detail: against("scrape_fleet_largest", "scrape_fleet_compared", ("ms", "ms")) + ", scraped alternately"),
            .init(label: "ingest at \(Self.short(options.liveCheckpoints.last!)) live / at \(Self.short(options.comparedLive)) live",
                  measured: r.pairedRatio("ingest_largest", "ingest_compared"), limit: 1, atLeast: true,
                  detail: against("ingest_largest", "ingest_compared", ("ev/s", "ev/s"))
                    + "; SQLite alone on the same files \(Results.format(r.pairedRatio("storage_largest", "storage_compared"))) ×; "
                    + "CPU, the same ratio: writer per event \(Results.format(r.pairedRatio("cpu_writer_largest", "cpu_writer_compared"))) ×, "
                    + "SQLite alone per row \(Results.format(r.pairedRatio("cpu_storage_largest", "cpu_storage_compared"))) ×"),
            .init(label: "start-up until /-/ready, s", measured: startUp.seconds, limit: 2, atLeast: false,
                  detail: "process launch to first 200, " + startUp.detail),
            .init(label: "a 200 broadcast to \(options.broadcastSubscribers) subscribers, answered, ms",
                  measured: r.median("broadcast_subscribers"), limit: 100, atLeast: false,
                  detail: "vs \(Results.format(r.median("broadcast_none"))) ms to a channel without subscribers; "
                    + "the request right after waits \(Results.format(r.median("broadcast_after"))) ms (their rows)"),
        ]
        if options.quick { r.notes.append("quick mode: small sizes, so the targets' sizes are not met; it proves the bench runs") }
        r.notes.append("wrk (2 threads) and the server under test share the machine's \(r.machine.processors) CPUs")
    }

    /// 1000 as "1k", 1,000,000 as "1M".
    private static func short(_ n: Int) -> String {
        n >= 1_000_000 ? "\(n / 1_000_000)M" : n >= 1_000 ? "\(n / 1_000)k" : String(n)
    }
}
