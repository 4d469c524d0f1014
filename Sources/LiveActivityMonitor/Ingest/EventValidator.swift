import JSON
import LiveActivityWire

/// Turns one decoded JSON value into a validated `Event`, or names every problem with it.
/// The rules are the schema's rows (`EventSchema`, DESIGN.md section 3), checked in their
/// order; unknown fields are refused so that a typo such as `contentState` is reported
/// instead of silently dropped.
public enum EventValidator {
    /// The longest id (the read API's search takes no longer one).
    static let maxIDLength = EventSchema.maxIDLength

    /// A valid event, or every problem found with it.
    public enum Outcome: Sendable {
        case valid(Event)
        case invalid([FieldError])
    }

    public static func validate(_ value: JSONValue, index: Int) -> Outcome {
        guard case .object(let object) = value else {
            return .invalid([FieldError(index: index, field: "", error: "an event must be a JSON object")])
        }
        let entries = object.entries
        let count = EventField.allCases.count
        // Each field's member, found once by name (a lookup per field in the object was a scan
        // of its members each), and each field's checked value: on the stack.
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { positions in
            positions.initialize(repeating: -1)
            let lookup = EventSchema.lookup
            var present: UInt64 = 0
            var unnamed = false
            for position in entries.indices {
                if let field = lookup.field(entries[position].key) {
                    positions[Int(field.rawValue)] = position
                    present |= field.bit
                } else {
                    unnamed = true
                }
            }
            return withUnsafeTemporaryAllocation(of: CheckedValue.self, capacity: count) { storage in
                storage.initialize(repeating: .absent)
                defer { storage.deinitialize() }
                let values = ReadFields(values: storage)
                let outcome = check(entries, positions: positions, present: present, unnamed: unnamed,
                                    into: values, index: index)
                switch outcome {
                case .invalid(let errors): return .invalid(errors)
                case .valid(let type):
                    return .valid(Event.assembled(type, from: values, body: storedBody(entries, values)))
                }
            }
        }
    }

    private enum Checked {
        case valid(EventType)
        case invalid([FieldError])
    }

    /// Checks every row against the member it names (`positions`), keeping each valid value in `values`.
    private static func check(_ entries: [JSONObject.Element], positions: UnsafeMutableBufferPointer<Int>,
                              present: UInt64, unnamed: Bool, into values: ReadFields, index: Int) -> Checked {
        func value(_ field: EventField) -> JSONValue? {
            let position = positions[Int(field.rawValue)]
            return position < 0 ? nil : entries[position].value
        }
        var reader = FieldReader(index: index)
        let rows = EventSchema.fields

        // The type first: it decides what else is allowed.
        guard case .eventType(let maxLength) = rows[Int(EventField.type.rawValue)].kind,
              let typeName = reader.string(rows[Int(EventField.type.rawValue)], value(.type), required: true, maxLength: maxLength)
        else { return .invalid(reader.errors) }
        guard let type = EventType(rawValue: typeName) else {
            let known = EventType.allCases.map(\.rawValue).joined(separator: ", ")
            return .invalid([FieldError(index: index, field: "type", error: "unknown type \"\(typeName)\"; expected one of \(known)")])
        }
        let allowed = EventSchema.allowed(on: type)
        if unnamed || present & ~allowed != 0 {
            for (key, _) in entries where !(EventSchema.lookup.field(key).map { allowed & $0.bit != 0 } ?? false) {
                reader.fail(key, "unknown field for \(type.rawValue)")
            }
        }

        func given(_ field: EventField) -> Bool { value(field).map { $0 != .null } ?? false }
        let typeKinds = EventKinds(type)
        var kinds = EventKinds(type, push: nil)
        for row in rows where row.field != .type {
            switch row.checked {
            case .always: break
            case .whereAllowed:
                if row.allowed.isDisjoint(with: typeKinds) { continue }
            case .withValid(let other):
                // Waits for `other` only on the types that have it (a channel request has no `event`).
                if row.allowed.isDisjoint(with: typeKinds)
                    || (!other.spec.allowed.isDisjoint(with: typeKinds) && values.isAbsent(other)) { continue }
            }
            let read = reader.read(row, value(row.field), required: !row.required.isDisjoint(with: kinds))
            values.set(row.field, read)
            if row.field == .event {
                kinds = EventKinds(type, push: values.choice(.event).map { PushKind.allCases[$0] },
                                   broadcast: given(.channelID))
            }
            if case .enumeration(let choices) = row.kind, let requiring = choices.requiring,
               case .choice(let chosen) = read, choices.values[chosen] == requiring.value, values.isAbsent(requiring.field) {
                reader.fail(requiring.field.spec.label, "required when \(row.name) is \"\(requiring.value)\"")
            }
        }
        // A start push names the token it went to in either field (DESIGN.md section 3).
        if kinds == .pushToStart, !given(.pushToken), !given(.pushToStartToken) {
            reader.fail(EventField.pushToken.spec, "required (or push_to_start_token)")
        }
        // A broadcast goes to a channel, instead of an activity's token: naming both is not
        // understood. A start push names its channel in `input_push_channel`.
        if kinds == .pushBroadcast, !values.isAbsent(.channelID) {
            for field in [EventField.activityID, .pushToken, .pushToStartToken] where given(field) {
                reader.fail(field.spec, "not allowed on a broadcast (a push.sent with channel_id)")
            }
        }
        // A channel APNs created has an id; a create it refused has none.
        if kinds == .channelCreated, !given(.channelID), let status = values.integer(.status), (200..<300).contains(status) {
            reader.fail(EventField.channelID.spec, "required when status is 2xx (APNs created the channel)")
        }
        if kinds == .pushToStart, given(.channelID) {
            reader.fail(EventField.channelID.spec, "not allowed on a start push (its channel is input_push_channel)")
        }
        return reader.errors.isEmpty ? .valid(type) : .invalid(reader.errors)
    }

    /// The stored text: dates as RFC 3339 UTC, the raw token swapped for its fingerprint, a null
    /// `booking_id` left out (so that the writer can append an inherited one), each as its
    /// row's `StoredForm` says. Written straight from the parsed members: building a normalised
    /// copy first cost a sixth of batched decoding. Dates and content objects come as the
    /// reader already read them (dates parsed, objects written as text), so that none is
    /// parsed or written twice.
    static func storedBody(_ entries: [JSONObject.Element], _ values: ReadFields) -> String {
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        let lookup = EventSchema.lookup
        let forms = EventSchema.storedForms
        for (key, value) in entries {
            // Every member of a valid event is a field.
            let field = lookup.field(key)
            switch field.map({ forms[Int($0.rawValue)] }) ?? .asIs {
            case .asIs:
                w.key(key); w.write(value)
            case .nullLeftOut:
                if case .null = value { continue }
                w.key(key); w.write(value)
            case .date:
                if let field, let seconds = values.number(field) {
                    // Stored as sent where RFC 3339 has no form for it (a timestamp in milliseconds).
                    w.key(key); w.date(seconds)
                } else {
                    w.key(key); w.write(value)
                }
            case .content:
                if let field, let text = values.content(field) {
                    w.key(key); w.write(text)
                } else {
                    w.key(key); w.write(value)
                }
            case .fingerprint:
                if let field {
                    w.key(EventSchema.storedKeys[Int(field.rawValue)]); w.string(values.fingerprint(field))
                }
            }
        }
        w.endObject()
        return w.string
    }
}

/// A field's value once checked, as the general validator keeps it.
enum CheckedValue {
    /// Absent, null, or invalid.
    case absent
    /// Valid, with nothing kept (`alert`).
    case valid
    case text(String)
    /// A number, or a date's Unix seconds.
    case number(Double)
    case integer(Int)
    /// The position of the value in the field's `Choices`.
    case choice(Int)
    case content(JSONText)
    case fingerprint(String)
}

/// The validator's checked values, one per field (by raw value), in storage it owns for the
/// length of one `validate` call.
struct ReadFields: CheckedFields {
    let values: UnsafeMutableBufferPointer<CheckedValue>

    func set(_ field: EventField, _ value: CheckedValue) { values[Int(field.rawValue)] = value }

    func isAbsent(_ field: EventField) -> Bool {
        if case .absent = values[Int(field.rawValue)] { true } else { false }
    }

    func isPresent(_ field: EventField) -> Bool { !isAbsent(field) }

    func text(_ field: EventField) -> String? {
        if case .text(let text) = values[Int(field.rawValue)] { text } else { nil }
    }

    func number(_ field: EventField) -> Double? {
        if case .number(let number) = values[Int(field.rawValue)] { number } else { nil }
    }

    func integer(_ field: EventField) -> Int? {
        if case .integer(let integer) = values[Int(field.rawValue)] { integer } else { nil }
    }

    func choice(_ field: EventField) -> Int? {
        if case .choice(let position) = values[Int(field.rawValue)] { position } else { nil }
    }

    func content(_ field: EventField) -> JSONText? {
        if case .content(let text) = values[Int(field.rawValue)] { text } else { nil }
    }

    func fingerprint(_ field: EventField) -> String? {
        if case .fingerprint(let fingerprint) = values[Int(field.rawValue)] { fingerprint } else { nil }
    }
}
