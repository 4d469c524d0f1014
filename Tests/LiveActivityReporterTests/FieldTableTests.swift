import Foundation
import Testing
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// The reporter's types and the monitor describe the same contract (DESIGN.md section 3):
/// these tests read the monitor's schema table (`EventSchema`), the one the validator and the
/// one-pass scanner check events with, so a field added, renamed, removed or retyped on
/// either side fails here. (The reporter declares no lengths or ranges of its own: it sends
/// what it is given. Its closed sets — the enumerations and `PushSent.Priority` — are checked
/// against the rows below.)
struct FieldTableTests {
    /// The types about activities (the reporter does not send channel requests yet: issue 22).
    static let activityTypes = EventType.allCases.filter { $0.channelOperation == nil }
    static let common = EventSchema.names(allowedOn: EventKinds.all.subtracting(.channelRequest))

    @Test func commonFieldsMatchTheSchema() {
        #expect(Set(LiveActivityEvent.commonFieldNames) == Self.common)
    }

    @Test func everyTypeExistsOnBothSides() {
        #expect(Set(LiveActivityEvent.Kind.allCases.map(\.rawValue)) == Set(Self.activityTypes.map(\.rawValue)))
    }

    @Test(arguments: activityTypes)
    func typeFieldsMatchTheSchema(_ type: EventType) throws {
        let kind = try #require(LiveActivityEvent.Kind(rawValue: type.rawValue))
        let reporter = LiveActivityEvent.fieldNames(of: kind)
        #expect(reporter.count == Set(reporter).count, "a field is declared twice")
        #expect(Set(reporter) == EventSchema.names(allowedOn: EventKinds(type)).subtracting(Self.common))
    }

    /// Each enumeration's values, as the schema's rows have them.
    static func choices(_ field: EventField) -> [String] {
        guard case .enumeration(let choices) = field.spec.kind else { return [] }
        return choices.values
    }

    @Test func enumeratedValuesMatchTheSchema() {
        #expect(ActivityStarted.Source.allCases.map(\.rawValue) == Self.choices(.source))
        #expect(ActivityEnded.DismissalPolicy.allCases.map(\.rawValue) == Self.choices(.dismissalPolicy))
        #expect(PushSent.Event.allCases.map(\.rawValue) == Self.choices(.event))
    }

    /// `PushSent.Priority` offers exactly the priorities the schema's row takes.
    @Test func prioritiesMatchTheSchema() throws {
        guard case .integer(let rule) = EventField.priority.spec.kind else {
            Issue.record("priority is not an integer row")
            return
        }
        let accepted = rule.bounds.range.filter(rule.bounds.accepts)
        #expect(PushSent.Priority.allCases.map(\.rawValue) == accepted)
    }

    @Test func dateFieldsAreDatesOnBothSides() throws {
        // Every field the schema reads as a date is a `Date` in the reporter's samples, so it
        // is encoded as RFC 3339; a number or string there would be a drift.
        let dates = EventSchema.fields.filter { if case .date = $0.kind { true } else { false } }.map(\.label)
        #expect(dates.count >= 4)
        for event in Samples.everyKind() {
            let json = try #require(try JSONDecoder().decode(JSONContent.self, from: event.jsonData()).objectValue)
            for field in dates {
                guard let value = json[field] else { continue }
                let text = try #require(value.stringValue, "\(event.kind.rawValue).\(field) is not a string")
                #expect(RFC3339.parse(text) != nil, "\(event.kind.rawValue).\(field) = \(text)")
            }
        }
    }

    /// The least each factory can make (only the arguments it cannot do without) still carries
    /// every field the schema requires of that type.
    @Test func minimalEventsCarryEveryRequiredField() throws {
        let token = Samples.token
        let minimal: [(LiveActivityEvent, EventKinds)] = [
            (.started(activityID: "a", bookingID: "b", attributesType: "T", ActivityStarted(contentState: [:])), .activityStarted),
            (.updated(activityID: "a", ActivityUpdated(contentState: [:])), .activityUpdated),
            (.tokenUpdated(activityID: "a", pushToken: token), .activityTokenUpdated),
            (.stale(activityID: "a"), .activityStale),
            (.ended(activityID: "a"), .activityEnded),
            (.dismissed(activityID: "a"), .activityDismissed),
            (.pushSent(activityID: "a", PushSent(event: .update, status: 200, latencyMs: 1, pushToken: token)), .pushUpdateOrEnd),
            (.pushSent(activityID: nil, PushSent(event: .start, status: 200, latencyMs: 1, pushToken: token), bookingID: "b"),
             .pushToStart),
            (.observed(activityID: "a", ActivityObserved(contentState: [:])), .activityObserved),
            (.pushToStartToken(deviceID: "d", attributesType: "T", pushToken: token), .devicePushToStartToken),
        ]
        #expect(Set(minimal.map(\.0.kind)) == Set(LiveActivityEvent.Kind.allCases))
        for (event, kinds) in minimal {
            let keys = Set(try #require(try JSONDecoder().decode(JSONContent.self, from: event.jsonData()).objectValue).keys)
            let missing = EventSchema.names(requiredOn: kinds).subtracting(keys)
            #expect(missing.isEmpty, "\(event.kind.rawValue) leaves out \(missing.sorted())")
        }
    }
}
