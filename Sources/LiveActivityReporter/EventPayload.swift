/// The fields one event type adds to the common ones (DESIGN.md section 3). Each conforming
/// type's `CodingKeys` are exactly the wire names the monitor's `EventValidator` accepts for
/// its type; a test compares the two tables so that neither side can change alone.
protocol EventPayload: Encodable, Sendable {
    associatedtype Field: CodingKey & CaseIterable
    static var kind: LiveActivityEvent.Kind { get }
}

extension EventPayload {
    /// The wire names of this type's own fields.
    static var fieldNames: [String] { Field.allCases.map(\.stringValue) }
}
