import Foundation

/// What to run and how big (`--quick` for the smoke run that `Tests/run-all.sh` does).
struct BenchOptions {
    static let usage = """
        Usage: live-activity-monitor-bench [--quick] [--rounds N] [--seconds N] [--out FILE]
                                           [--no-full-durability] [--keep] [--only PHASES]
                                           [--postgres URI | --no-postgres] [--million]
                                           [--numbered-ids]

        Measures the monitor against the HTTP limit (libmicrohttpd alone answering a fixed 200,
        beside our HTTPServer doing the same), the
        storage limit (prepared inserts into our schema) and Prometheus Pushgateway, in one run;
        prints a table and writes it as JSON (default .build/bench/results.json).
        Needs wrk and prometheus-pushgateway: Tests/install-dependencies.sh bench

          --quick               small sizes and 1-second rounds (a smoke run, under a minute)
          --rounds N            rounds per throughput figure (default 5; quick 2)
          --seconds N           seconds per wrk round (default 5; quick 1)
          --out FILE            where to write the JSON
          --no-full-durability  skip the extra single-event run with --durability full
          --keep                keep the databases (printed), e.g. to profile a server on them
          --only PHASES         run only these phases: throughput,connections,growth,broadcast,scrape
                                (comma-separated; connections: 10,000 idle connections beside the load;
                                growth ends with ingest at its largest size against 10,000 live,
                                round by round on new servers, each round beside SQLite alone
                                storing the same rows into the same two files), or
                                stages: the ingest stages without HTTP and the storage limit, or
                                decode: single-object decoding alone (quick to profile),
                                broadcast: a 200 broadcast to 10,000 subscribers,
                                postgres: ingest over PostgreSQL against its storage limit,
                                startup: start-up on a file of --startup-live live activities
          --startup-live N      live activities in the start-up file (default 1000000; quick 2000)
          --startup-pushes N    push updates per activity in it besides its start (default 0)
          --startup-db FILE     the start-up file: used as it is if it exists, else built
                                there and kept (default: a new one in the run's directory)
          --startup-against BIN another build's live-activity-monitor (or bench) binary, started
                                on the same file in each round too, alternately
          --million             the growth phase goes on to 1,000,000 live activities and
                                10,000,000 events (also LAM_BENCH_MILLION=1; minutes and
                                several GB of disk)
          --numbered-ids        the growth and start-up files' ids as a prefix and a number,
                                each new one beside the last in every index (the figures
                                before session 31), not UUIDs as production's: random
                                activity and booking ids (ActivityKit's are), time-ordered
                                event ids (as LiveActivityReporter makes them)
          --postgres URI        a PostgreSQL server whose role may create databases (also
                                LAM_BENCH_POSTGRES) for the postgres phase (databases
                                created and dropped by the run); without it, the full run
                                starts a private cluster from Debian's postgresql
          --no-postgres         skip the postgres phase

        """

    var quick = false
    var rounds = 5
    var seconds = 5
    var output: String?
    var fullDurability = true
    var keep = false
    var phases: Set<String> = ["throughput", "connections", "growth", "broadcast", "scrape"]
    /// Idle keep-alive connections held open beside the posting clients (`connections`).
    var idleConnections = 10_000

    /// Live activities at the growth checkpoints (a fourth with `--million`); each has a start
    /// and `pushesPerActivity` updates.
    var liveCheckpoints = [1_000, 10_000, 100_000]
    /// The growth phase's size that ingest at its largest is compared with (issue 24: 10,000).
    var comparedLive: Int { liveCheckpoints.contains(10_000) ? 10_000 : liveCheckpoints[0] }
    var pushesPerActivity = 9
    /// The events-only check: the same live activities, with history up to each total.
    var ratioLive = 500
    var ratioSmallEvents = 10_000
    var ratioEvents = 1_000_000
    /// Activities the wrk scripts push to.
    var wrkActivities = 1_000
    /// Events per batched request (the 500; fewer in quick mode, where a debug build
    /// could not answer 64 requests of 500 within a 1-second round).
    var eventsPerBatch = 500
    /// Rows per storage-baseline round.
    var storageRows = 200_000
    /// Timed GETs per read figure.
    var probes = 21
    /// Activities subscribed to the channel of the broadcast figure.
    var broadcastSubscribers = 10_000
    /// Growth to 1,000,000 live activities (issue 24's fleet), behind a flag: it takes minutes.
    var million = false
    /// A PostgreSQL server for the `postgres` phase (else a private cluster).
    var postgres: String?
    var noPostgres = false
    /// The start-up phase's file: live activities, updates each, where it is kept.
    var startupLive = 1_000_000
    var startupPushes = 0
    var startupDatabase: String?
    /// Another server binary to start on the same file (`--startup-against`).
    var startupAgainst: String?
    /// How the growth and start-up datasets name activities, bookings and events.
    var ids = Dataset.IDs.uuids

    init(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        var args = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let v = args.popFirst() else { throw BenchError("\(flag) needs a value") }
            return v
        }
        func positive(_ flag: String) throws -> Int {
            guard let n = Int(try value(flag)), n > 0 else { throw BenchError("\(flag) needs a positive integer") }
            return n
        }
        var rounds: Int?, seconds: Int?, live: Int?, onlyGiven = false
        while let arg = args.popFirst() {
            switch arg {
            case "--quick": quick = true
            case "--rounds": rounds = try positive(arg)
            case "--seconds": seconds = try positive(arg)
            // From the working directory: a bare file name has no directory part to create.
            case "--out": output = URL(fileURLWithPath: try value(arg)).standardizedFileURL.path
            case "--no-full-durability": fullDurability = false
            case "--keep": keep = true
            case "--postgres": postgres = try value(arg)
            case "--million": million = true
            case "--numbered-ids": ids = .numbered
            case "--no-postgres": noPostgres = true
            case "--startup-live": live = try positive(arg)
            case "--startup-pushes":
                guard let n = Int(try value(arg)), (0...999).contains(n) else { throw BenchError("--startup-pushes needs 0 to 999") }
                startupPushes = n
            case "--startup-db": startupDatabase = try value(arg)
            case "--startup-against": startupAgainst = try value(arg)
            case "--only":
                onlyGiven = true
                phases = Set(try value(arg).split(separator: ",").map(String.init))
                guard phases.isSubset(of: ["throughput", "connections", "growth", "broadcast", "scrape", "stages", "decode", "postgres", "startup"]) else {
                    throw BenchError("--only takes throughput, connections, growth, broadcast, scrape, stages, decode, postgres, startup")
                }
            default: throw BenchError("unknown argument '\(arg)'\n\n" + Self.usage)
            }
        }
        if environment["LAM_BENCH_MILLION"] == "1" { million = true }
        if million, !quick { liveCheckpoints.append(1_000_000) }
        if postgres == nil, let uri = environment["LAM_BENCH_POSTGRES"], !uri.isEmpty { postgres = uri }
        // The full run measures PostgreSQL too (a private cluster unless a server is given);
        // the quick one (in the test command) does not: it would start a cluster for nothing.
        if !onlyGiven, !quick || postgres != nil { phases.insert("postgres") }
        if noPostgres { phases.remove("postgres") }
        if quick {
            self.rounds = 2
            self.seconds = 1
            liveCheckpoints = [100, 300, 1_000]
            ratioLive = 20
            ratioSmallEvents = 400
            ratioEvents = 5_000
            wrkActivities = 100
            storageRows = 5_000
            eventsPerBatch = 50
            probes = 5
            idleConnections = 1_000
            broadcastSubscribers = 1_000
            startupLive = 2_000
        }
        if let rounds { self.rounds = rounds }
        if let seconds { self.seconds = seconds }
        if let live { startupLive = live }
    }
}
