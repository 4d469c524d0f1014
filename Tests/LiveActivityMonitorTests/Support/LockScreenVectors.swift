import Foundation
import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// The lock-screen vectors (Fixtures/lockscreen-rules.json: all 30; Fixtures/channel-rules.json: our own
/// cases of the channel rules) and the one runner that
/// both test tiers use: a runner takes a `TestedMonitor` (in process or over HTTP) and makes the
/// same requests and the same assertions in either.
enum LockScreenVectors {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let value: JSONObject
        var testDescription: String { name }
        var expects: [JSONValue] { value["expect"]?.arrayValue ?? [] }
    }

    static let cases: [Case] = load(Repository.root + "/Tests/LiveActivityMonitorTests/Fixtures/lockscreen-rules.json")
    /// Our own cases of the channel rules, beyond the reference's.
    static let channelCases: [Case] = load(Repository.root + "/Tests/LiveActivityMonitorTests/Fixtures/channel-rules.json")
    /// The reference the fixture's cases are copied from (DESIGN.md section 4).
    static let referenceCases: [Case] = load(Repository.root + "/docs/vectors/lockscreen-rules.json")

    static func load(_ path: String) -> [Case] {
        guard let data = FileManager.default.contents(atPath: path),
              let root = try? JSONParser.parse([UInt8](data)),
              case .array(let cases)? = root["cases"] else { return [] }
        return cases.compactMap { c in
            guard case .object(let o) = c, case .string(let name)? = o["name"] else { return nil }
            return Case(name: name, value: o)
        }
    }

    static let timeFields = ["occurred_at", "timestamp", "stale_date", "dismissal_date", "start_date"]

    /// The case's events with every relative time turned into Unix seconds, and a timestamp
    /// written "MS:t" into (base + t) × 1000: milliseconds, as a backend bug sends them.
    static func events(_ c: Case) -> [(at: Double, event: JSONValue)] {
        guard case .array(let events)? = c.value["events"] else { return [] }
        return events.map { e in
            guard case .object(var o) = e else { return (0, e) }
            for field in timeFields {
                if case .number(let n)? = o[field] { o[field] = .number(JSONNumber(TestServer.base + n.doubleValue)) }
                if case .string(let text)? = o[field], text.hasPrefix("MS:"), let t = Double(text.dropFirst(3)) {
                    o[field] = .number(JSONNumber((TestServer.base + t) * 1000))
                }
            }
            let at = o["occurred_at"]?.doubleValue ?? TestServer.base
            return (at, .object(o))
        }
    }

    /// The case's activity: the first that one of its events names (a start push names none).
    static func activityID(_ c: Case) -> String {
        events(c).lazy.compactMap { $0.event["activity_id"]?.stringValue }.first ?? ""
    }

    /// The activity an expectation reads: the one it names (cases with several), else the case's.
    static func activityID(_ c: Case, _ expect: JSONValue) -> String {
        expect["activity_id"]?.stringValue ?? activityID(c)
    }

    /// Every event arrives at its own time on the monitor's clock; at each expectation's instant
    /// the activity is read back (`/api/activities/{id}`) and checked.
    static func expectations(_ c: Case, _ monitor: TestedMonitor) throws {
        var pending = events(c)
        let id = activityID(c)
        let label = "\(c.name) (\(monitor.tier))"
        for expect in c.expects {
            let at = TestServer.base + (expect["at"]?.doubleValue ?? 0)
            // Everything that happened up to this instant arrives at its own time.
            while let next = pending.first, next.at <= at {
                monitor.time.set(next.at)
                let response = try monitor.post(events: [next.event])
                #expect(response.status == 200, "\(label): \(response.text)")
                pending.removeFirst()
            }
            monitor.time.set(at)
            try check(expect, against: try monitor.json("/api/activities/\(activityID(c, expect))"), case: label)
        }
        if c.expects.isEmpty {
            for (at, event) in pending {
                monitor.time.set(at)
                #expect(try monitor.post(events: [event]).status == 200, "\(label)")
            }
            if !id.isEmpty {
                let response = try monitor.get("/api/activities/\(id)")
                #expect(response.status == 404, "\(label): an activity never started has no lock-screen state")
            }
        }
    }

    /// All the events at once at time 0 on a fresh monitor, then each of the case's series in `/metrics`.
    static func metrics(_ c: Case, _ monitor: TestedMonitor) throws {
        let label = "\(c.name) (\(monitor.tier))"
        let response = try monitor.post(events: events(c).map(\.event))
        #expect(response.status == 200, "\(label): \(response.text)")
        guard case .object(let metrics)? = c.value["metrics"] else { return }
        let text = try monitor.get("/metrics").text
        for (series, want) in metrics.entries {
            let got = MetricsText.value(of: series, in: text)
            #expect(got == want.doubleValue, "\(label): \(series) is \(got.map { "\($0)" } ?? "absent"), expected \(want.jsonString)")
        }
    }

    /// All the events at once, then each expectation's instant asked with `?at=` (server-side
    /// replay of the stored events through a fresh engine).
    static func replay(_ c: Case, _ monitor: TestedMonitor) throws {
        let label = "\(c.name) (\(monitor.tier), ?at=)"
        #expect(try monitor.post(events: events(c).map(\.event)).status == 200, "\(label)")
        let id = activityID(c)
        for expect in c.expects {
            let at = TestServer.base + (expect["at"]?.doubleValue ?? 0)
            let response = try monitor.get("/api/activities/\(activityID(c, expect))?at=\(RFC3339.format(at))")
            #expect(response.status == 200, "\(label): \(response.text)")
            try check(expect, against: try JSONParser.parse(response.body), case: label)
        }
        if c.expects.isEmpty, !id.isEmpty {
            #expect(try monitor.get("/api/activities/\(id)?at=\(RFC3339.format(TestServer.base))").status == 404, "\(label)")
        }
    }

    /// Each field `expect` names, as the read API states it.
    static func check(_ expect: JSONValue, against activity: JSONValue, case name: String) throws {
        guard case .object(let fields) = expect else { return }
        let at = fields["at"]?.doubleValue ?? 0
        for (key, want) in fields.entries where key != "at" && key != "activity_id" {
            let got: JSONValue?
            var wanted = want
            switch key {
            case "token_rotations": got = activity["token"]?["rotations"]
            case "token_invalidated": got = activity["token"]?["invalidated"]
            case "visible_until":
                got = activity["visible_until"]
                wanted = .string(RFC3339.format(TestServer.base + (want.doubleValue ?? 0)))
            default: got = activity[key]
            }
            #expect(got == wanted, "\(name) at \(at): \(key) is \(got?.jsonString ?? "missing"), expected \(wanted.jsonString)")
        }
    }
}
