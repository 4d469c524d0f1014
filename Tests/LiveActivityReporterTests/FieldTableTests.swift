import Foundation
import Testing
@testable import LiveActivityMonitor
@testable import LiveActivityReporter

/// The reporter's types and the monitor's decoder describe the same contract (DESIGN.md
/// section 3): these tests read the decoder's own tables, so a field added, renamed or removed
/// on either side fails here.
struct FieldTableTests {
    @Test func commonFieldsMatchTheDecoder() {
        #expect(Set(LiveActivityEvent.commonFieldNames) == EventValidator.commonFields)
    }

    @Test func everyTypeExistsOnBothSides() {
        #expect(Set(LiveActivityEvent.Kind.allCases.map(\.rawValue)) == Set(EventType.allCases.map(\.rawValue)))
    }

    @Test(arguments: EventType.allCases)
    func typeFieldsMatchTheDecoder(_ type: EventType) throws {
        let kind = try #require(LiveActivityEvent.Kind(rawValue: type.rawValue))
        let reporter = LiveActivityEvent.fieldNames(of: kind)
        #expect(reporter.count == Set(reporter).count, "a field is declared twice")
        #expect(Set(reporter) == EventValidator.fieldsByType[type] ?? [])
    }

    @Test func enumeratedValuesMatchTheDecoder() {
        #expect(Set(ActivityStarted.Source.allCases.map(\.rawValue)) == Set(StartSource.allCases.map(\.rawValue)))
        #expect(Set(ActivityEnded.DismissalPolicy.allCases.map(\.rawValue)) == Set(DismissalPolicy.allCases.map(\.rawValue)))
        #expect(Set(PushSent.Event.allCases.map(\.rawValue)) == Set(PushKind.allCases.map(\.rawValue)))
    }

    @Test func dateFieldsAreDatesOnBothSides() throws {
        // Every field the decoder reads as a date is a `Date` in the reporter's samples, so it
        // is encoded as RFC 3339; a number or string there would be a drift.
        for event in Samples.everyKind() {
            let json = try #require(try JSONDecoder().decode(JSONContent.self, from: event.jsonData()).objectValue)
            for field in EventValidator.dateFields {
                guard let value = json[field] else { continue }
                let text = try #require(value.stringValue, "\(event.kind.rawValue).\(field) is not a string")
                #expect(RFC3339.parse(text) != nil, "\(event.kind.rawValue).\(field) = \(text)")
            }
        }
    }
}
