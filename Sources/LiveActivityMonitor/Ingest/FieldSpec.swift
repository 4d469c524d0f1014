/// One row of the ingest schema (`EventSchema.fields`): a field, what its value must be, and
/// where it is allowed and required.
struct FieldSpec: Sendable {
    let field: EventField
    /// The member name on the wire.
    let name: StaticString
    let kind: Kind
    /// The types that may have it; on another type it is an unknown field.
    let allowed: EventKinds
    /// The types that must have it (JSON `null` counts as absent).
    let required: EventKinds
    /// When the general validator checks a value that is present.
    let checked: Checked
    /// Whether the stored body leaves out a JSON `null` (`booking_id`: the writer then appends
    /// the booking the activity has, `EventStore.body(_:inheriting:)`).
    let nullLeftOut: Bool

    init(_ field: EventField, _ name: StaticString, _ kind: Kind, allowed: EventKinds, required: EventKinds = [],
         checked: Checked = .always, nullLeftOut: Bool = false) {
        self.field = field
        self.name = name
        self.kind = kind
        self.allowed = allowed
        self.required = required
        self.checked = checked
        self.nullLeftOut = nullLeftOut
    }

    /// An alert's members (`Kind.alert`).
    static let alertParts: [StaticString] = ["title", "body"]

    /// The name as error messages carry it.
    var label: String { name.description }

    /// How the stored body (`EventValidator.storedBody`, `PushEventScanner.write`) writes the
    /// member: as it came, except for these.
    enum StoredForm: UInt8, Sendable {
        case asIs
        /// Left out when JSON `null` (see `nullLeftOut`).
        case nullLeftOut
        /// RFC 3339 UTC, to the millisecond (its number outside years 0000–9999).
        case date
        /// The compact text the writer makes of the object.
        case content
        /// The token's fingerprint, under `HexToken.storedName`.
        case fingerprint
    }

    var storedForm: StoredForm {
        switch kind {
        case .date: .date
        case .content: .content
        case .token: .fingerprint
        default: nullLeftOut ? .nullLeftOut : .asIs
        }
    }

    /// What a field's value must be, with its limits; also how the stored body writes it.
    enum Kind: Sendable {
        /// `type`: a string of at most `maxLength` bytes naming an `EventType`. Read first: it
        /// decides which fields are allowed.
        case eventType(maxLength: Int)
        /// A non-empty string of at most `maxLength` UTF-8 bytes without control characters
        /// (`IdentifierText`): it ends up in keys, labels and logs.
        case identifier(maxLength: Int)
        /// One of a closed set of strings.
        case enumeration(Choices)
        /// RFC 3339 text or Unix seconds, inside the window (`EventSchema.dateWindow`,
        /// `valueWindow`); stored as RFC 3339 UTC, or as its number where RFC 3339 has no form for
        /// it (`RFC3339.hasForm`: years 0000–9999).
        case date(Range<Double>)
        /// A finite number in the range.
        case number(ClosedRange<Double>)
        /// An integer (any literal with an integral value) in the rule's range.
        case integer(IntegerRule)
        /// A JSON object, kept and served as the compact text the writer makes of it, at most
        /// `maxBytes` long (ActivityKit's limit).
        case content(maxBytes: Int)
        /// `{title, body}`: each a string of at most `maxLength` bytes.
        case alert(maxLength: Int)
        /// An APNs token in hex; only its fingerprint is kept, stored as `HexToken.storedName`.
        case token(HexToken)
    }

    /// When the general validator checks a present value. (A field is always refused where it
    /// is not allowed; these say whether its value is checked too, so that a 422 names both.)
    enum Checked: Sendable {
        /// On every type.
        case always
        /// Only on the types that allow it.
        case whereAllowed
        /// Only where allowed and the other field has a valid value: the parts of a push
        /// result are read only once its `event` is known.
        case withValid(EventField)
    }

    /// The values of an enumeration: an `EnumeratedValue` type's raw values, in its order.
    struct Choices: Sendable {
        let values: [String]
        /// A value that makes another field required (`dismissal_policy` `after` needs a
        /// `dismissal_date`), checked after this field; that field's row must come first.
        let requiring: (value: String, field: EventField)?

        init<T: CaseIterable & RawRepresentable>(_ type: T.Type, requiring: (value: T, field: EventField)? = nil)
        where T.RawValue == String {
            values = T.allCases.map(\.rawValue)
            self.requiring = requiring.map { ($0.value.rawValue, $0.field) }
        }

        /// "must be one of "a", "b"".
        var message: String { "must be one of " + values.map { "\"\($0)\"" }.joined(separator: ", ") }
    }

    /// An integer field's range, and a part of it that is still refused with its own message
    /// (HTTP statuses 1–99; priorities 6–9).
    struct IntegerRule: Sendable {
        let bounds: IntegerBounds
        let refusedMessage: String

        init(_ range: ClosedRange<Int>, refusing refused: ClosedRange<Int>? = nil, and refusedToo: ClosedRange<Int>? = nil,
             _ refusedMessage: String = "") {
            bounds = IntegerBounds(range: range, refused: refused, refusedToo: refusedToo)
            self.refusedMessage = refusedMessage
        }
    }

    /// The values an integer field takes (a plain value, so that the one-pass scanner keeps a
    /// copy without reference counting).
    struct IntegerBounds: Sendable {
        let range: ClosedRange<Int>
        let refused: ClosedRange<Int>?
        /// A second refused part (priorities 2–4 as well as 6–9).
        var refusedToo: ClosedRange<Int>? = nil

        @inline(__always)
        func accepts(_ value: Int) -> Bool {
            range.contains(value) && !(refused?.contains(value) ?? false) && !(refusedToo?.contains(value) ?? false)
        }
    }

    /// An APNs token: an even number of hex digits (either case), `minLength` to `maxLength`.
    struct HexToken: Sendable {
        let minLength: Int
        let maxLength: Int
        /// The member that holds its fingerprint in the stored body.
        let storedName: StaticString

        var message: String {
            "must be a hex-encoded APNs token (an even number of 0-9a-f digits, at least \(minLength))"
        }

        /// Whether `token` (already known to be 1 to `maxLength` bytes) is one.
        @inline(__always)
        func accepts(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
            guard token.count >= minLength, token.count % 2 == 0 else { return false }
            for byte in token where !(byte &- UInt8(ascii: "0") < 10 || (byte | 0x20) &- UInt8(ascii: "a") < 6) {
                return false
            }
            return true
        }
    }
}
