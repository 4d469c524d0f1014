extension Optional {
    /// Whether a value is here, read from the tag alone. `record != nil` on an Equatable value
    /// such as `ActivityRecord` resolves to Optional's Equatable `!=`, which compares through a
    /// copy of the value: for a record, every field retained and released, on every event.
    var isPresent: Bool {
        if case .none = self { return false }
        return true
    }
}
