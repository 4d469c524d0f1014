import Prometheus

/// The few distinct strings met last, one copy of each: a fleet's attributes types and apps are
/// a handful of values repeated in every record, so records read back one after another can
/// share a copy of each instead of holding one apiece. Compared by bytes (`ExactText`), the same
/// storage at once.
struct RecentStrings {
    private var strings: [String] = []
    static let capacity = 8

    /// A string met before with the bytes of `s`; else `keep(s)`, remembered unless `keep` says
    /// nil (then `s` itself).
    mutating func shared(_ s: String, keeping keep: (String) -> String? = { $0 }) -> String {
        if let known = strings.first(where: { ExactText.equal($0, s) }) { return known }
        guard let kept = keep(s) else { return s }
        if strings.count == Self.capacity { strings.removeFirst() }
        strings.append(kept)
        return kept
    }
}

extension ActivityRecord {
    /// Its attributes type and app, shared through `recent` with the records read before it. At
    /// once as each is read: the copy it drops is freed right away, for the next row to reuse.
    mutating func shareStrings(_ recent: inout RecentStrings) {
        attributesType = recent.shared(attributesType)
        if let app { self.app = recent.shared(app) }
    }
}
