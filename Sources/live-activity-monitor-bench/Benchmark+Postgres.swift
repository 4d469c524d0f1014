import Foundation
import PostgresDB
import TestSupport

/// The `postgres` phase (a private cluster, or `--postgres URI`): single-event and batched ingest over `serve --db
/// postgres://…` against the PostgreSQL storage limit measured in the same rounds, as ratios.
/// Each server and the limit get a database of their own, created on that server and
/// dropped at the end.
extension Benchmark {
    func postgresThroughput() throws {
        let admin = try options.postgres ?? privateCluster()
        let adminDB = try PostgresConnection(uri: admin)
        // Names built here from a number: safe in DDL, which takes no parameters.
        let names = ["single", "batched", "storage"].map { "lam_bench_\(getpid())_\($0)" }
        for name in names { try adminDB.execute("CREATE DATABASE \(name)") }
        var servers: [ChildProcess] = []
        defer {
            for server in servers { stop(server) }
            for name in names { try? adminDB.execute("DROP DATABASE IF EXISTS \(name)") }
        }
        let uris = names.map { Self.uri(admin, database: $0) }
        let single = try monitor("monitor-postgres", database: uris[0])
        servers.append(single)
        let batched = try monitor("monitor-postgres-batched", database: uris[1])
        servers.append(batched)
        let wrkSet = Dataset(prefix: "w", now: unixNow)
        let activities = options.wrkActivities
        for server in servers {
            try Populator(port: server.port).post(batches: (activities + 999) / 1000) { j in
                (j * 1000..<min(j * 1000 + 1000, activities)).map { wrkSet.start($0, age: 3600) }
            }
        }
        let lines = (0..<options.storageRows).map {
            Dataset.wrkEvent(run: "st", counter: $0 + 1, activityPrefix: "wa", activities: activities, base: unixNow)
        }
        let storage = try PostgresStorageBaseline(uri: uris[2], events: lines)

        let wrk = Wrk(seconds: options.seconds)
        var singleRate: [Double] = [], batchRate: [Double] = [], storageRate: [Double] = [], writerEventsPerCommit: [Double] = []
        for round in 1...options.rounds {
            let base = String(Int(unixNow) + round * 600)
            func load(_ server: ChildProcess, _ script: String, _ args: [String]) throws -> Wrk.Result {
                let result = try wrk.run(url: "http://127.0.0.1:\(server.port)", script: Wrk.script(script), args)
                server.waitUntilIdle()
                guard result.failures == 0 else {
                    throw BenchError("\(server.name): \(result.failures) failed requests\n\(result.output)\n\(server.output.contents.suffix(2000))")
                }
                return result
            }
            singleRate.append(try load(single, "single-event.lua", ["ps\(round)", "wa", String(activities), base]).requestsPerSecond)
            let per = options.eventsPerBatch
            let batchedBefore = try storeProgress(port: batched.port)
            let b = try load(batched, "ndjson-batch.lua", ["pb\(round)", "wa", String(activities), base, String(per)])
            batchRate.append(b.requestsPerSecond * Double(per))
            // Over the batched database's sizes and in its writer's mean commit, as the SQLite
            // storage limit (`throughput()`).
            let batchedRound = try storeProgress(port: batched.port).since(batchedBefore)
            writerEventsPerCommit.append(Double(batchedRound.eventsPerCommit))
            try storage.fill(to: batchedBefore.events)
            storageRate.append(try storage.insert(batchedRound.events, perTransaction: batchedRound.eventsPerCommit))
            log("round \(round): PostgreSQL single \(Int(singleRate.last!)) ev/s, batched \(Int(batchRate.last!)) ev/s, "
                + "storage limit \(Int(storageRate.last!)) rows/s")
        }
        results.add("pg_single", "PostgreSQL: single-event ingest", "events/s", singleRate)
        results.add("pg_batched", "PostgreSQL: batched ingest (NDJSON, \(options.eventsPerBatch) per request)", "events/s", batchRate)
        results.add("pg_writer_events_per_commit", "PostgreSQL: batched ingest's events per commit (the limit's transaction)", "events", writerEventsPerCommit)
        results.add("pg_storage_limit", "PostgreSQL storage limit (prepared batch inserts, the writer's commit size)", "rows/s", storageRate)
        results.add("pg_single_ratio", "PostgreSQL: single-event ingest / storage limit", "×",
                    zip(singleRate, storageRate).map { $0 / $1 })
        results.add("pg_batched_ratio", "PostgreSQL: batched ingest / storage limit", "×",
                    zip(batchRate, storageRate).map { $0 / $1 })
    }

    /// `admin` with its database name replaced by `database` (`postgres://user@host:port/db?…`).
    static func uri(_ admin: String, database: String) -> String {
        guard let scheme = admin.range(of: "://") else { return admin }
        let rest = admin[scheme.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let query = rest[authorityEnd...].firstIndex(of: "?").map { String(rest[$0...]) } ?? ""
        return String(admin[..<authorityEnd]) + "/" + database + query
    }

    /// A cluster of our own in a temporary directory (Debian's `postgresql`, as the tests start
    /// it), stopped when the bench exits: its superuser's URI.
    private func privateCluster() throws -> String {
        do {
            let cluster = try PostgresCluster.shared()
            // The tests' settings: the ratios compare like with like, the absolute figures are
            // not those of a durable server (give --postgres URI for that).
            log("postgres: a private cluster in \(cluster.directory) (fsync off, as the tests run it)")
            return cluster.uri(database: "postgres")
        } catch {
            throw BenchError("the postgres phase could not start a private cluster (\(error)): install Debian's "
                             + "postgresql (Tests/install-dependencies.sh bench), give --postgres URI, or --no-postgres")
        }
    }
}
