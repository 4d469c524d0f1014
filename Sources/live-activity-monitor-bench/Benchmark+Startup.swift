import Foundation

/// Issue 24 item 5: start-up on a large file of live activities, from launch of `serve` until
/// `GET /-/ready` answers 200. The file is built once through the real ingest path (NDJSON
/// batches of starts, and `--startup-pushes` updates each) and can be kept (`--startup-db`) for
/// repeated runs. Each round starts the server on it and records the wall time, the process's
/// CPU time at that moment (user + system, /proc/PID/stat) and its resident memory (VmRSS,
/// VmHWM); with `--startup-against BIN`, another build's server starts on the same file in
/// each round too, alternately, for ratios from the same minutes of the machine.
extension Benchmark {
    func startUp() throws {
        let live = options.startupLive, pushes = options.startupPushes
        let path = options.startupDatabase ?? directory + "/startup.sqlite"
        if !FileManager.default.fileExists(atPath: path) {
            log("start-up: building \(path): \(live) live activities, \(1 + pushes) events each")
            try buildStartupFile(path, live: live, pushes: pushes)
        } else {
            log("start-up: reusing \(path)")
        }
        let servers = [("ours", BenchRunner.executablePath)] + (options.startupAgainst.map { [("against", $0)] } ?? [])
        // The servers, then SQLite itself (`SQLiteFloor`, no executable) reading the same rows.
        let runs: [(String, String?)] = servers.map { ($0.0, $0.1) } + [("sqlite", nil)]
        var wall: [String: [Double]] = [:], cpu: [String: [Double]] = [:]
        var rss: [String: [Double]] = [:], hwm: [String: [Double]] = [:]
        for round in 1...options.rounds {
            // Alternate which goes first: the page cache and the machine's load favour neither.
            for (name, executable) in round % 2 == 1 ? runs : runs.reversed() {
                guard let executable else {
                    let floor = try SQLiteFloor.read(path: path)
                    wall[name, default: []].append(floor.wallSeconds)
                    cpu[name, default: []].append(floor.cpuSeconds)
                    log("round \(round), SQLite itself: read the live rows in \(Results.format(floor.wallSeconds)) s, "
                        + "CPU \(Results.format(floor.cpuSeconds)) s (\(Machine.loadAverage))")
                    continue
                }
                let server = try monitor("startup-" + name, database: path, executable: executable)
                // Read at once, before anything else runs in the server.
                let cpuSeconds = server.cpuSeconds
                let resident = Double(server.memoryBytes("VmRSS") ?? 0) / 1e6
                let peak = Double(server.memoryBytes("VmHWM") ?? 0) / 1e6
                stop(server)
                wall[name, default: []].append(server.startSeconds)
                cpu[name, default: []].append(cpuSeconds)
                rss[name, default: []].append(resident)
                hwm[name, default: []].append(peak)
                log("round \(round), \(name): ready in \(Results.format(server.startSeconds)) s, CPU \(Results.format(cpuSeconds)) s, "
                    + "VmRSS \(Results.format(resident)) MB, VmHWM \(Results.format(peak)) MB (\(Machine.loadAverage))")
            }
        }
        for (name, _) in servers {
            let who = name == "ours" ? "" : " (\(options.startupAgainst ?? ""))"
            results.add("startup_wall_\(name)", "start-up until /-/ready, \(live) live\(who)", "s", wall[name]!)
            results.add("startup_cpu_\(name)", "  its CPU time (user + system)\(who)", "s", cpu[name]!)
            results.add("startup_rss_\(name)", "  VmRSS when ready\(who)", "MB", rss[name]!)
            results.add("startup_hwm_\(name)", "  VmHWM when ready\(who)", "MB", hwm[name]!)
        }
        results.add("startup_wall_sqlite", "SQLite itself: start-up's SELECT of the live rows, same ranges and threads", "s", wall["sqlite"]!)
        results.add("startup_cpu_sqlite", "  its CPU time (user + system)", "s", cpu["sqlite"]!)
        results.add("startup_wall_sqlite_ratio", "start-up wall, ours / SQLite itself, per round", "×", results.roundRatios("startup_wall_ours", "startup_wall_sqlite"))
        results.add("startup_cpu_sqlite_ratio", "start-up CPU, ours / SQLite itself, per round", "×", results.roundRatios("startup_cpu_ours", "startup_cpu_sqlite"))
        if options.startupAgainst != nil {
            results.add("startup_wall_ratio", "start-up wall, ours / against, per round", "×", results.roundRatios("startup_wall_ours", "startup_wall_against"))
            results.add("startup_cpu_ratio", "start-up CPU, ours / against, per round", "×", results.roundRatios("startup_cpu_ours", "startup_cpu_against"))
        }
    }

    /// `live` activities started within the hour before the run (so all still live for hours),
    /// `pushes` updates each, 1,000 events per request.
    private func buildStartupFile(_ path: String, live: Int, pushes: Int) throws {
        let server = try monitor("startup-loading", database: path)
        defer { stop(server) }
        let data = Dataset(prefix: "su", now: unixNow, ids: options.ids)
        let perBatch = max(1, 1000 / (1 + pushes))
        let spread = 2400.0 / Double(max(1, live))
        let (seconds, rate) = try Stopwatch.time {
            try Populator(port: server.port).post(batches: (live + perBatch - 1) / perBatch) { j in
                (j * perBatch..<min(j * perBatch + perBatch, live)).flatMap { i in
                    data.activity(i, pushes: pushes, age: 3000 - Double(i) * spread)
                }
            }
        }
        log("start-up: built in \(Int(seconds)) s (\(Int(rate)) ev/s)")
    }
}
