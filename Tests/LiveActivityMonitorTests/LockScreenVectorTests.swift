import Foundation
import JSON
import Testing
@testable import LiveActivityMonitor

/// Runs every case of Fixtures/lockscreen-rules.json (cases 1–18 of docs/vectors/) against the real
/// server: events are posted over HTTP at their own time on a manual clock, and each expectation
/// is read back through the read API at its time; metrics come from a fresh server that took
/// all events at time 0.
@Suite struct LockScreenVectorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let value: JSONObject
        var testDescription: String { name }
    }

    static let cases: [Case] = {
        let path = TestServer.repositoryRoot + "/Tests/LiveActivityMonitorTests/Fixtures/lockscreen-rules.json"
        guard let data = FileManager.default.contents(atPath: path),
              let root = try? JSONParser.parse([UInt8](data)),
              case .array(let cases)? = root["cases"] else { return [] }
        return cases.compactMap { c in
            guard case .object(let o) = c, case .string(let name)? = o["name"] else { return nil }
            return Case(name: name, value: o)
        }
    }()

    static let timeFields = ["occurred_at", "timestamp", "stale_date", "dismissal_date"]

    /// The case's events with every relative time turned into Unix seconds.
    static func events(_ c: Case) -> [(at: Double, event: JSONValue)] {
        guard case .array(let events)? = c.value["events"] else { return [] }
        return events.map { e in
            guard case .object(var o) = e else { return (0, e) }
            for field in timeFields {
                if case .number(let n)? = o[field] { o[field] = .number(JSONNumber(TestServer.base + n.doubleValue)) }
            }
            let at = o["occurred_at"]?.doubleValue ?? TestServer.base
            return (at, .object(o))
        }
    }

    @Test func allEighteenCasesLoaded() {
        #expect(Self.cases.count == 18)
    }

    @Test(arguments: cases)
    func expectations(_ c: Case) throws {
        let server = try TestServer()
        defer { server.stop() }
        var pending = Self.events(c)
        let activityID = pending.first?.event["activity_id"]?.stringValue ?? ""
        guard case .array(let expects)? = c.value["expect"] else { return }
        for expect in expects {
            let at = TestServer.base + (expect["at"]?.doubleValue ?? 0)
            // Everything that happened up to this instant arrives at its own time.
            while let next = pending.first, next.at <= at {
                server.time.set(next.at)
                let response = try server.post(events: [next.event])
                #expect(response.status == 200, "\(c.name): \(response.text)")
                pending.removeFirst()
            }
            server.time.set(at)
            let activity = try server.json("/api/activities/\(activityID)")
            try check(expect, against: activity, case: c.name)
        }
        if expects.isEmpty {
            for (at, event) in pending {
                server.time.set(at)
                #expect(try server.post(events: [event]).status == 200)
            }
            let response = try server.get("/api/activities/\(activityID)")
            #expect(response.status == 404, "\(c.name): an activity never started has no lock-screen state")
        }
    }

    func check(_ expect: JSONValue, against activity: JSONValue, case name: String) throws {
        guard case .object(let fields) = expect else { return }
        let at = fields["at"]?.doubleValue ?? 0
        for (key, want) in fields.entries where key != "at" {
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

    @Test(arguments: cases.filter { $0.value["metrics"] != nil })
    func metrics(_ c: Case) throws {
        let server = try TestServer()
        defer { server.stop() }
        let response = try server.post(events: Self.events(c).map(\.event))
        #expect(response.status == 200, "\(c.name): \(response.text)")
        guard case .object(let metrics)? = c.value["metrics"] else { return }
        let text = try server.get("/metrics").text
        for (series, want) in metrics.entries {
            let got = MetricsText.value(of: series, in: text)
            #expect(got == want.doubleValue, "\(c.name): \(series) is \(got.map { "\($0)" } ?? "absent"), expected \(want.jsonString)")
        }
    }
}
