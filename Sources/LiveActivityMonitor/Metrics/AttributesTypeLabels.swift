import LiveActivityWire
import Prometheus

/// The `attributes_type` label's closed set. Types with a template, or listed by the operator
/// (`--attributes-types`), always have their own series. The other slots, up to `limit` types
/// in all, go to types seen on app-reported starts; any other type reads `other`. Any ingest
/// client can report starts, so a slot whose type no live activity uses goes to a type that
/// found none free (`expire`): junk names cannot hold the slots for good.
///
/// Types compare by their bytes (`ExactString`): canonically equivalent spellings are two types.
public struct AttributesTypeLabels: Sendable, Equatable {
    public static let limit = 50
    /// The overflow's label. Not a name a Swift type can have, so that a real type named
    /// `other` keeps a series of its own; a type reported with this very name reads as it.
    public static let other = "(other)"

    public private(set) var reserved: Set<ExactString>
    public private(set) var admitted: Set<ExactString> = []
    /// App-reported types turned away since the last `expire` (at most `limit` kept).
    public private(set) var waiting: Set<ExactString> = []

    /// - Parameter admitted: candidates for the free slots, best first (start-up's choice).
    public init(reserved: some Sequence<String> = [], admitted candidates: some Sequence<String> = []) {
        self.reserved = Set(reserved.lazy.filter { $0 != Self.other }.map(ExactString.init))
        for type in candidates where !isKnown(ExactString(type)) && type != Self.other && freeSlots > 0 {
            admitted.insert(ExactString(type))
        }
    }

    /// Every type with its own series.
    public var known: [String] { reserved.union(admitted).map(\.text) }

    private var freeSlots: Int { max(0, Self.limit - reserved.count - admitted.count) }

    private func isKnown(_ type: ExactString) -> Bool { reserved.contains(type) || admitted.contains(type) }

    public func label(for type: String) -> String {
        isKnown(ExactString(type)) ? type : Self.other
    }

    /// The label of a type that just started, given a slot if it has none, is app-reported
    /// and one is free.
    public mutating func admit(_ type: String, source: StartSource) -> String {
        let key = ExactString(type)
        if isKnown(key) { return type }
        guard source == .app, type != Self.other else { return Self.other }
        if freeSlots > 0 {
            admitted.insert(key)
            return type
        }
        if waiting.count < Self.limit { waiting.insert(key) }
        return Self.other
    }

    /// Gives the slots of admitted types that no live activity uses (`inUse`) to types that
    /// waited for one; returns the types that gave theirs up. Their series end (the caller
    /// removes them, so that the label never has more than `limit` values); their new counts
    /// go to `other`.
    public mutating func expire(inUse: Set<ExactString>) -> Set<ExactString> {
        let unused = admitted.subtracting(inUse).sorted()
        let next = waiting.sorted()
        var released = Set<ExactString>()
        for (old, new) in zip(unused, next) {
            admitted.remove(old)
            admitted.insert(new)
            released.insert(old)
        }
        waiting = []
        return released
    }

    /// Whether `type` has series of its own: a known type, or the overflow.
    public func hasSeries(_ type: ExactString) -> Bool { isKnown(type) || type.text == Self.other }
}
