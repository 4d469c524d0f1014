import HTTPServer
import JSON

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
        // Per problem: how many, and the newest-started `limit` (copied out of the lock).
        let groups: [(count: Int, records: [ActivityRecord])] = store.withLiveState { s in
            s.records.withRecords { records in
                var found = [[Int]](repeating: [], count: TriageProblem.allCases.count)
                for i in records.indices {
                    for problem in TriageProblem.of(records[i], at: now, priority10Budget: budget) {
                        found[TriageProblem.allCases.firstIndex(of: problem)!].append(i)
                    }
                }
                return found.map { indices in
                    let newest = indices.sorted { a, b in
                        let x = records[a], y = records[b]
                        return x.startedAt != y.startedAt ? x.startedAt > y.startedAt : x.activityID < y.activityID
                    }
                    return (indices.count, newest.prefix(limit).map { records[$0] })
                }
            }
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
                w.key("activities")
                w.beginArray()
                for r in group.records {
                    w.beginObject()
                    w.key("activity_id"); w.string(r.activityID)
                    w.key("booking_id"); w.string(r.bookingID)
                    w.key("attributes_type"); w.string(r.attributesType)
                    w.key("state"); w.string(r.state(at: now).rawValue)
                    w.key("started_at"); w.string(RFC3339.format(r.startedAt))
                    w.key("detail"); w.string(problem.detail(r, at: now, priority10Budget: budget))
                    w.endObject()
                }
                w.endArray()
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
    }
}
