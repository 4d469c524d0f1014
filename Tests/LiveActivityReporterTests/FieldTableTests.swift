import Foundation
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// The reporter's types and the monitor describe the same contract (DESIGN.md section 3):
/// these tests read the monitor's schema table (`EventSchema`), the one the validator and the
/// one-pass scanner check events with, so a field added, renamed, removed or retyped on
/// either side fails here. (The reporter declares no lengths or ranges of its own: it sends
/// what it is given. The event types and the enumerations are the monitor's own, from
/// `LiveActivityWire`; `PushSent.Priority` is checked against its row below.)
struct FieldTableTests {
    /// The fields every type about activities allows (the envelope: `id`, `type`, `activity_id`, …).
    static let activityCommon = EventSchema.names(allowedOn: EventKinds.all.subtracting(.channelRequest))
    /// The fields both channel management results allow: no activity, booking or attributes
    /// type, but the answer's channel, status, reason and latency.
    static let channelCommon = EventSchema.names(allowedOn: .channelRequest)

    /// The types whose envelope names no activity are exactly the schema's channel requests.
    @Test(arguments: EventType.allCases)
    func theTypesThatNameNoActivityAreTheChannelRequests(_ type: EventType) {
        #expect(type.namesActivity == EventKinds(type).isDisjoint(with: .channelRequest))
        #expect(type.namesActivity == EventSchema.names(allowedOn: EventKinds(type)).contains("activity_id"))
    }

    /// Each group's envelope is what the schema allows on every type of the group: for the
    /// channel requests, with the answer's fields both their payloads declare.
    @Test func commonFieldsMatchTheSchema() throws {
        #expect(Set(LiveActivityEvent.commonFieldNames(of: .activityStarted)) == Self.activityCommon)
        let channelEnvelope = Set(LiveActivityEvent.commonFieldNames(of: .channelCreated))
        #expect(channelEnvelope == Set(LiveActivityEvent.commonFieldNames(of: .channelDeleted)))
        let shared = Set(ChannelCreated.fieldNames).intersection(ChannelDeleted.fieldNames)
        #expect(channelEnvelope.isDisjoint(with: shared))
        #expect(channelEnvelope.union(shared) == Self.channelCommon)
        // What tells the groups apart: the three fields the schema allows on activities only.
        #expect(Self.activityCommon.subtracting(Self.channelCommon) == ["activity_id", "booking_id", "attributes_type"])
        #expect(Set(LiveActivityEvent.commonFieldNames(of: .activityStarted)).subtracting(channelEnvelope)
                == ["activity_id", "booking_id", "attributes_type"])
    }

    /// For every type, the envelope and the type's own fields together are exactly what the
    /// schema allows on it, each declared once.
    @Test(arguments: EventType.allCases)
    func typeFieldsMatchTheSchema(_ type: EventType) {
        let envelope = LiveActivityEvent.commonFieldNames(of: type)
        let own = LiveActivityEvent.fieldNames(of: type)
        #expect(own.count == Set(own).count, "a field is declared twice")
        #expect(Set(own).isDisjoint(with: envelope), "a field is in the envelope and the type's own")
        #expect(Set(envelope).union(own) == EventSchema.names(allowedOn: EventKinds(type)))
    }

    /// The integers a row takes (its range less what it refuses).
    static func accepted(_ field: EventField) -> [Int] {
        guard case .integer(let rule) = field.spec.kind else {
            Issue.record("\(field) is not an integer row")
            return []
        }
        return rule.bounds.range.filter(rule.bounds.accepts)
    }

    /// `PushSent.Priority` offers exactly the priorities the schema's row takes.
    @Test func prioritiesMatchTheSchema() throws {
        #expect(PushSent.Priority.allCases.map(\.rawValue) == Self.accepted(.priority))
    }

    /// `ChannelCreated.StoragePolicy` offers exactly the `message-storage-policy` values the row takes.
    @Test func storagePoliciesMatchTheSchema() throws {
        #expect(ChannelCreated.StoragePolicy.allCases.map(\.rawValue) == Self.accepted(.storagePolicy))
        #expect(Self.accepted(.storagePolicy) == [0, 1])
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
            (.channelCreated(ChannelCreated(channelID: "c", status: 201)), .channelCreated),
            // A refused create has no channel.
            (.channelCreated(ChannelCreated(channelID: nil, status: 400)), .channelCreated),
            (.channelDeleted(ChannelDeleted(channelID: "c", status: 204)), .channelDeleted),
        ]
        #expect(Set(minimal.map(\.0.kind)) == Set(LiveActivityEvent.Kind.allCases))
        for (event, kinds) in minimal {
            let keys = Set(try #require(try JSONDecoder().decode(JSONContent.self, from: event.jsonData()).objectValue).keys)
            let missing = EventSchema.names(requiredOn: kinds).subtracting(keys)
            #expect(missing.isEmpty, "\(event.kind.rawValue) leaves out \(missing.sorted())")
        }
    }
}
