import Foundation
import JSON

/// Every figure of one run, printed as tables and written as JSON.
final class Results {
    struct Figure {
        var key: String
        var label: String
        var unit: String
        var rounds: [Double]
        var median: Double { Stats.median(rounds) }
    }

    struct Target {
        var label: String
        var measured: Double
        var limit: Double
        var atLeast: Bool
        var detail: String
        var pass: Bool { atLeast ? measured >= limit : measured <= limit }
        /// Not measured in this run (a phase left out with `--only`): neither met nor missed.
        var measuredInThisRun: Bool { measured.isFinite }
        var verdict: String { !measuredInThisRun ? "—" : pass ? "pass" : "MISS" }
    }

    struct GrowthRow {
        var events: Int
        var liveActivities: Int
        var ingestEventsPerSecond: Double
        var scrapeMs: Double
        var bookingMs: Double
        var listMs: Double
        var triageMs: Double
        var residentMB: Double
    }

    let options: BenchOptions
    let machine: Machine
    private(set) var figures: [Figure] = []
    var targets: [Target] = []
    var growth: [GrowthRow] = []
    var notes: [String] = []

    init(options: BenchOptions, machine: Machine) {
        self.options = options
        self.machine = machine
    }

    func add(_ key: String, _ label: String, _ unit: String, _ rounds: [Double]) {
        figures.append(Figure(key: key, label: label, unit: unit, rounds: rounds))
    }

    func median(_ key: String) -> Double { figures.first { $0.key == key }?.median ?? .nan }

    /// The median of per-round ratios `a[i] / b[i]` (rounds measured side by side).
    func pairedRatio(_ a: String, _ b: String) -> Double {
        let ratios = roundRatios(a, b)
        return ratios.isEmpty ? median(a) / median(b) : Stats.median(ratios)
    }

    /// `a / b` round by round (empty unless both have the same rounds).
    func roundRatios(_ a: String, _ b: String) -> [Double] {
        guard let x = figures.first(where: { $0.key == a })?.rounds, let y = figures.first(where: { $0.key == b })?.rounds,
              x.count == y.count else { return [] }
        return zip(x, y).map { $0 / $1 }
    }

    // MARK: Output

    func table() -> String {
        var out = "\nLive Activity Monitor benchmark (\(options.quick ? "quick" : "full"): \(options.rounds) rounds"
        out += ", wrk -t2 -c64 -d\(options.seconds)s, keep-alive)\n"
        out += "machine: \(machine.processors) CPUs, \(machine.cpuModel), \(machine.memoryMB) MB, Linux \(machine.kernel)"
        out += ", SQLite \(machine.sqliteVersion)\n\n"
        out += Self.columns(["figure", "median", "unit", "rounds"], [46, 12, 12, 0])
        for f in figures {
            out += Self.columns([f.label, Self.format(f.median), f.unit, f.rounds.map(Self.format).joined(separator: " ")],
                                [46, 12, 12, 0])
        }
        out += "\n" + Self.columns(["target", "measured", "required", "", "detail"], [52, 12, 12, 6, 0])
        for t in targets {
            out += Self.columns([t.label, Self.format(t.measured), (t.atLeast ? "≥ " : "≤ ") + Self.format(t.limit),
                                 t.verdict, t.detail], [52, 12, 12, 6, 0])
        }
        out += "\ngrowth (live activities = events / 10):\n"
        out += Self.columns(["events", "live", "ingest ev/s", "scrape ms", "booking ms", "list ms", "triage ms", "RSS MB"], [10, 9, 13, 11, 12, 9, 11, 0])
        for g in growth {
            out += Self.columns([String(g.events), String(g.liveActivities), Self.format(g.ingestEventsPerSecond),
                                 Self.format(g.scrapeMs), Self.format(g.bookingMs), Self.format(g.listMs),
                                 Self.format(g.triageMs), Self.format(g.residentMB)], [10, 9, 13, 11, 12, 9, 11, 0])
        }
        if !notes.isEmpty { out += "\n" + notes.map { "note: " + $0 }.joined(separator: "\n") + "\n" }
        return out
    }

    func json() -> String {
        var w = JSONWriter()
        w.beginObject()
        w.key("mode"); w.string(options.quick ? "quick" : "full")
        w.key("settings")
        w.beginObject()
        w.key("rounds"); w.number(options.rounds)
        w.key("seconds_per_round"); w.number(options.seconds)
        w.key("wrk"); w.string("-t2 -c64 keep-alive")
        w.key("durability"); w.string("normal (WAL, synchronous=NORMAL) unless named")
        w.endObject()
        w.key("machine")
        w.beginObject()
        w.key("nproc"); w.number(machine.processors)
        w.key("cpu_model"); w.string(machine.cpuModel)
        w.key("memory_mb"); w.number(machine.memoryMB)
        w.key("kernel"); w.string(machine.kernel)
        w.key("sqlite_version"); w.string(machine.sqliteVersion)
        w.key("wrk"); w.string(machine.wrk)
        w.key("pushgateway"); w.string(machine.pushgateway)
        w.endObject()
        w.key("figures")
        w.beginObject()
        for f in figures {
            w.key(f.key)
            w.beginObject()
            w.key("label"); w.string(f.label)
            w.key("unit"); w.string(f.unit)
            w.key("median"); w.number(f.median.isFinite ? f.median : nil)
            w.key("rounds")
            w.beginArray()
            for r in f.rounds { w.number(r.isFinite ? r : nil) }
            w.endArray()
            w.endObject()
        }
        w.endObject()
        w.key("targets")
        w.beginArray()
        for t in targets {
            w.beginObject()
            w.key("target"); w.string(t.label)
            w.key("measured"); w.number(t.measured.isFinite ? t.measured : nil)
            w.key("limit"); w.number(t.limit)
            w.key("comparison"); w.string(t.atLeast ? ">=" : "<=")
            w.key("pass"); w.bool(t.measuredInThisRun ? t.pass : nil)
            w.key("detail"); w.string(t.detail)
            w.endObject()
        }
        w.endArray()
        w.key("growth")
        w.beginArray()
        for g in growth {
            w.beginObject()
            w.key("events"); w.number(g.events)
            w.key("live_activities"); w.number(g.liveActivities)
            w.key("ingest_events_per_second"); w.number(g.ingestEventsPerSecond)
            w.key("scrape_ms"); w.number(g.scrapeMs)
            w.key("booking_ms"); w.number(g.bookingMs)
            w.key("list_ms"); w.number(g.listMs)
            w.key("triage_ms"); w.number(g.triageMs)
            w.key("resident_mb"); w.number(g.residentMB)
            w.endObject()
        }
        w.endArray()
        w.key("notes")
        w.beginArray()
        for n in notes { w.string(n) }
        w.endArray()
        w.endObject()
        return w.string + "\n"
    }

    static func format(_ x: Double) -> String {
        guard x.isFinite else { return "n/a" }
        let magnitude = abs(x)
        if magnitude >= 1000 { return String(Int(x.rounded())) }
        if magnitude >= 100 { return String(format: "%.1f", x) }
        if magnitude >= 1 { return String(format: "%.2f", x) }
        return String(format: "%.3f", x)
    }

    private static func columns(_ values: [String], _ widths: [Int]) -> String {
        var line = ""
        for (value, width) in zip(values, widths) {
            line += width == 0 ? value : value.padding(toLength: max(width, value.count + 1), withPad: " ", startingAt: 0)
        }
        return line + "\n"
    }
}
