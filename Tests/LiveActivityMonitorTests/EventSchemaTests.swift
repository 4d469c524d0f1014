import JSON
import LiveActivityWire
import Testing
@testable import LiveActivityMonitor

/// The schema table (`EventSchema`) is what both decoders, the stored body and the reporter's
/// tests read: its own consistency, and its lookups.
@Suite struct EventSchemaTests {
    @Test func everyNameIsFoundAndNothingElse() {
        let names = EventSchema.fields.map(\.label)
        #expect(Set(names).count == names.count, "a name twice")
        for row in EventSchema.fields {
            #expect(EventSchema.lookup.field(row.label) == row.field)
            for other in [row.label + "_", String(row.label.dropLast()), row.label.uppercased(), " " + row.label,
                          row.label.replacingOccurrences(of: "_", with: "")] where !names.contains(other) {
                #expect(EventSchema.lookup.field(other) == nil, "\(other)")
            }
        }
        #expect(EventSchema.lookup.field("") == nil)
        #expect(EventSchema.lookup.field(String(repeating: "x", count: 300)) == nil)
    }

    @Test(arguments: EventType.allCases)
    func allowedBitsAreTheRows(_ type: EventType) {
        let bits = EventSchema.allowed(on: type)
        let fromBits = Set(EventField.allCases.filter { bits & $0.bit != 0 }.map(\.spec.label))
        #expect(fromBits == EventSchema.names(allowedOn: EventKinds(type)))
        #expect(fromBits.contains("type") && fromBits.contains("occurred_at"))
    }

    /// A field is required only where it is allowed; a push.sent's kinds differ only in what
    /// they require.
    @Test func requiredFieldsAreAllowed() {
        for row in EventSchema.fields {
            #expect(row.allowed.isSuperset(of: row.required), "\(row.name)")
            #expect(row.allowed.contains(.pushToStart) == row.allowed.contains(.pushUpdateOrEnd), "\(row.name)")
        }
        #expect(EventSchema.names(requiredOn: .pushToStart).contains("booking_id"))
        #expect(!EventSchema.names(requiredOn: .pushToStart).contains("activity_id"))
        #expect(EventSchema.names(requiredOn: .pushUpdateOrEnd).contains("activity_id"))
    }

    @Test func theDateWindowSaysItsBounds() {
        #expect(EventSchema.dateWindowText == "outside 2000-01-01 … 2100-01-01")
    }

    /// The stored body's forms follow the kinds: only the tokens are renamed, each to its fingerprint.
    @Test func storedFormsAndKeys() {
        for row in EventSchema.fields {
            let key = EventSchema.storedKeys[Int(row.field.rawValue)]
            if case .token = row.kind {
                let expected = row.field == .pushToken ? "token_fingerprint" : row.label + "_fingerprint"
                #expect(key == expected && row.storedForm == .fingerprint)
            } else {
                #expect(key == row.label)
            }
        }
        #expect(EventField.bookingID.spec.storedForm == .nullLeftOut)
    }
}
