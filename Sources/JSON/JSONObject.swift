/// A JSON object that keeps its members in order, so a parsed `content_state` is written back
/// with the same key order. Keys are unique: ``JSONParser`` rejects duplicates, and building
/// or assigning entries with a repeated key keeps the first position and the last value.
///
/// Lookup is a linear scan for small objects (the usual case, and faster than hashing) and
/// goes through a key index once an object has more than 32 members.
///
/// Keys are compared by their exact characters (as JSON does, RFC 8259 §8.3), not by Swift's
/// canonical equivalence: `"\u00e9"` and `"e\u0301"` are two different keys.
///
/// Equality ignores order: two objects are equal when they have the same keys with equal values.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    /// Above this many members lookups use a dictionary; below it a scan wins, and parsing
    /// typical events (up to about 20 keys) never pays for hashing.
    public static let indexThreshold = 32

    private var storage: [Element]
    /// Position of each key in `storage`, kept only for objects above `indexThreshold`.
    private var index: [JSONKey: Int]?

    /// An empty object.
    public init() {
        storage = []
        index = nil
    }

    /// An object with these members in this order; a repeated key keeps its first position
    /// and its last value.
    public init(_ entries: [(String, JSONValue)]) {
        storage = []
        index = nil
        storage.reserveCapacity(entries.count)
        for (key, value) in entries { self[key] = value }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    /// For the parser, which has already checked that keys are unique (and may have built
    /// the index while doing so).
    init(uniqueEntries: [Element], index: [JSONKey: Int]?) {
        storage = uniqueEntries
        if uniqueEntries.count > Self.indexThreshold {
            self.index = index ?? Self.makeIndex(uniqueEntries)
        } else {
            self.index = nil
        }
    }

    /// The members in order. Assigning entries with a repeated key keeps the first position
    /// and the last value.
    public var entries: [Element] {
        get { storage }
        set { self = JSONObject(newValue.map { ($0.key, $0.value) }) }
    }

    /// The keys in order.
    public var keys: [String] { storage.map(\.key) }

    /// The values in key order.
    public var values: [JSONValue] { storage.map(\.value) }

    /// The number of members.
    public var count: Int { storage.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { storage.isEmpty }

    /// Whether the object has a member named `key`.
    public func contains(_ key: String) -> Bool { position(of: key) != nil }

    /// The value of `key`. Setting a value replaces it in place or appends a new member;
    /// setting `nil` removes the member.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let position = position(of: key) else { return nil }
            return storage[position].value
        }
        set {
            if let newValue {
                if let position = position(of: key) {
                    storage[position].value = newValue
                } else {
                    storage.append((key: key, value: newValue))
                    if index != nil {
                        index![JSONKey(key)] = storage.count - 1
                    } else if storage.count > Self.indexThreshold {
                        index = Self.makeIndex(storage)
                    }
                }
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Removes `key` and returns its value, keeping the order of the other members.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let position = position(of: key) else { return nil }
        let removed = storage.remove(at: position).value
        index = storage.count > Self.indexThreshold ? Self.makeIndex(storage) : nil
        return removed
    }

    public func makeIterator() -> IndexingIterator<[Element]> {
        storage.makeIterator()
    }

    public var underestimatedCount: Int { storage.count }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (key, value) in lhs.storage {
            guard let other = rhs[key], other == value else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-insensitive: combine each member's own hash with a commutative sum.
        var sum = 0
        for (key, value) in storage {
            var member = Hasher()
            JSONKey.hash(key, into: &member)
            member.combine(value)
            sum = sum &+ member.finalize()
        }
        hasher.combine(storage.count)
        hasher.combine(sum)
    }

    /// Whether two member names are the same key: the same bytes (`==` on `String` is
    /// canonical equivalence), compared in place, lengths first.
    public static func sameKey(_ a: String, _ b: String) -> Bool {
        JSONKey.same(a, b)
    }

    private func position(of key: String) -> Int? {
        if let index { return index[JSONKey(key)] }
        let length = key.utf8.count
        return storage.firstIndex { $0.key.utf8.count == length && JSONKey.same($0.key, key) }
    }

    private static func makeIndex(_ entries: [Element]) -> [JSONKey: Int] {
        var index = [JSONKey: Int](minimumCapacity: entries.count)
        for (position, entry) in entries.enumerated() { index[JSONKey(entry.key)] = position }
        return index
    }
}
