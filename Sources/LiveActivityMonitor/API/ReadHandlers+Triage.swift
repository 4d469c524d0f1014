import HTTPServer
import JSON
import LiveActivityWire

/// `GET /api/triage`: what needs a look now, grouped by problem (`TriageProblem`), each group
/// with its count and its newest-started activities, each linking to its booking.
extension ReadHandlers {
    static let triageLimit = PageLimit(defaultValue: 50, most: 500)

    func triage(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let limit = try Self.triageLimit.parse(request.query)
        let now = store.clock.now()
        let budget = priority10Budget
        // Per problem: how many, and the newest `limit` rows (copied out of the lock), from the
        // kept sets: the lock is held for the problems times the page, not the fleet.
        let groups: [(count: Int, items: [Item])] = store.withLiveState { s in
            let found = s.records.keptTriage(at: now, limit: limit, priority10Budget: budget)
                ?? Self.walkedTriage(in: s.records, at: now, limit: limit, priority10Budget: budget)
            var groups = s.records.withRecords { records in
                zip(TriageProblem.allCases, found).map { problem, group in
                    (group.count, group.positions.map { Item(records[$0], problem, now: now, budget: budget) })
                }
            }
            let unstarted = TriageProblem.unstarted(s.unstartedStarts, at: now)
            groups[TriageProblem.startNotStarted.index] =
                (unstarted.count, unstarted.suffix(limit).reversed().map(Item.init(unstarted:)))
            return groups
        }
        return .json { w in
            w.beginObject()
            w.key("at"); w.string(RFC3339.format(now))
            w.key("priority10_budget"); w.number(Int64(budget))
            w.key("problems")
            w.beginArray()
            for (problem, group) in zip(TriageProblem.allCases, groups) {
                w.beginObject()
                w.key("problem"); w.string(problem.rawValue)
                w.key("title"); w.string(group.count == 1 ? problem.title.one : problem.title.many)
                w.key("count"); w.number(Int64(group.count))
                w.key("items")
                w.beginArray()
                for item in group.items {
                    w.beginObject()
                    w.key("booking_id"); w.string(item.bookingID)
                    w.key("activity_id"); w.string(item.activityID)
                    w.key("attributes_type"); w.string(item.attributesType)
                    w.key("state"); w.string(item.state)
                    w.key("at"); w.date(item.at)
                    w.key("detail"); w.string(item.detail)
                    w.endObject()
                }
                w.endArray()
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
    }

    /// What `ActivityTable.keptTriage` answers, by one walk that judges every live record
    /// (`TriageProblem.of`): the fallback when the sets cannot answer (a clock set back before the
    /// table's `gaugeTime`; a table whose sets are not kept), and the tests' oracle.
    static func walkedTriage(in table: ActivityTable, at now: Double, limit: Int,
                             priority10Budget budget: Int) -> [(count: Int, positions: [Int])] {
        table.withRecords { records in
            var found = [[Int]](repeating: [], count: TriageProblem.allCases.count)
            for i in records.indices {
                for problem in TriageProblem.of(records[i], at: now, priority10Budget: budget) {
                    found[problem.index].append(i)
                }
            }
            return found.map { indices in
                let newest = indices.sorted { TriageKey.ordered(TriageKey(records[$0]), TriageKey(records[$1])) }
                return (indices.count, Array(newest.prefix(limit)))
            }
        }
    }

    /// One row of a triage group: an activity (at its start), or a start push (at its sending).
    struct Item {
        var bookingID: String?
        var activityID: String?
        var attributesType: String?
        var state: String?
        var at: Double
        var detail: String

        init(_ r: ActivityRecord, _ problem: TriageProblem, now: Double, budget: Int) {
            bookingID = r.bookingID
            activityID = r.activityID
            attributesType = r.attributesType
            state = r.state(at: now).rawValue
            at = r.startedAt
            detail = problem.detail(r, at: now, priority10Budget: budget)
        }

        init(unstarted p: PushToStartBook.Pending) {
            bookingID = p.bookingID
            attributesType = p.attributesType
            at = p.sentAt
            detail = TriageProblem.detail(unstarted: p)
        }
    }
}
