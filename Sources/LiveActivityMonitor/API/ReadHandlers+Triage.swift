import HTTPServer
import JSON
import LiveActivityWire

/// `GET /api/triage`: what needs a look now, grouped by problem (`TriageProblem`), each group
/// with its count and its newest-started activities, each linking to its booking.
extension ReadHandlers {
    static let triageDefaultLimit = 50
    static let triageMaxLimit = 500

    func triage(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        var limit = Self.triageDefaultLimit
        if let text = request.query["limit"] {
            guard let n = Int(text), (1...Self.triageMaxLimit).contains(n) else {
                throw .badRequest("limit must be an integer from 1 to \(Self.triageMaxLimit)")
            }
            limit = n
        }
        let now = store.clock.now()
        let budget = priority10Budget
        // Per problem: how many, and the newest `limit` rows (copied out of the lock).
        let groups: [(count: Int, items: [Item])] = store.withLiveState { s in
            var groups = s.records.withRecords { records in
                var found = [[Int]](repeating: [], count: TriageProblem.allCases.count)
                for i in records.indices {
                    for problem in TriageProblem.of(records[i], at: now, priority10Budget: budget) {
                        found[TriageProblem.allCases.firstIndex(of: problem)!].append(i)
                    }
                }
                return zip(TriageProblem.allCases, found).map { problem, indices in
                    let newest = indices.sorted { a, b in
                        let x = records[a], y = records[b]
                        return x.startedAt != y.startedAt ? x.startedAt > y.startedAt : x.activityID < y.activityID
                    }
                    return (indices.count, newest.prefix(limit).map { Item(records[$0], problem, now: now, budget: budget) })
                }
            }
            let unstarted = TriageProblem.unstarted(s.unstartedStarts, at: now)
            groups[TriageProblem.allCases.firstIndex(of: .startNotStarted)!] =
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
                    w.key("at"); w.string(RFC3339.format(item.at))
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
