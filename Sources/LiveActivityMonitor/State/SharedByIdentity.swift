/// The strings met last, by identity (`StringIdentity`), each with the string it was made
/// (`share`): a string met again costs two words compared, and nothing when it was kept as it was.
struct SharedByIdentity {
    /// Types and apps are a handful; free text beyond this many is made afresh each time.
    static let capacity = 16
    private var met: [(identity: StringIdentity, kept: Bool, made: String)] = []

    /// What `s` (whose identity is `identity`) is made: by `make` when not met, else as it was
    /// then. Nil when it stays as it is.
    mutating func share(_ identity: StringIdentity, _ s: @autoclosure () -> String,
                        _ make: (String) -> String) -> String? {
        if let k = met.firstIndex(where: { $0.identity == identity }) { return met[k].kept ? nil : met[k].made }
        let original = s()
        let made = make(original)
        let kept = StringIdentity(of: made) == identity
        if met.count == Self.capacity { met.removeFirst() }
        met.append((identity, kept, made))
        return kept ? nil : made
    }
}
