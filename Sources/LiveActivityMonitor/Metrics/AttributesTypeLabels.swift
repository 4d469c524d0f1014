/// The `attributes_type` label's closed set: the first 50 distinct types seen, then `other`.
public struct AttributesTypeLabels: Sendable, Equatable {
    public static let limit = 50
    public static let other = "other"
    public private(set) var known: Set<String> = []

    public init(known: Set<String> = []) { self.known = known }

    public func label(for type: String) -> String {
        known.contains(type) ? type : Self.other
    }

    /// Admits a type if there is room, and returns its label.
    public mutating func admit(_ type: String) -> String {
        if !known.contains(type), known.count < Self.limit, type != Self.other { known.insert(type) }
        return label(for: type)
    }
}
