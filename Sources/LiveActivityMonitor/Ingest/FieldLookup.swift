import JSON

/// The schema's fields by member name, compared by bytes (as JSON compares names), by length
/// first: a name meets only the few field names of its own length. No hashing (hashing each
/// member name into a `Set<String>` was a measurable share of decoding).
///
/// `@unchecked Sendable`: its buffers are written once, in `init`, and only read afterwards.
/// Buffers rather than arrays so that a lookup, on every member of every event, is loads and
/// compares with no reference counting.
final class FieldLookup: @unchecked Sendable {
    /// The fields whose names are `n` bytes long are `order[starts[n]..<starts[n + 1]]`.
    private let starts: UnsafeMutableBufferPointer<Int>
    /// Raw values of `EventField`s.
    private let order: UnsafeMutableBufferPointer<UInt8>
    /// Each field's name, by raw value.
    private let names: UnsafeMutableBufferPointer<StaticString>

    init(_ rows: [FieldSpec]) {
        let longest = rows.map { $0.name.utf8CodeUnitCount }.max() ?? 0
        var starts: [Int] = []
        var order: [UInt8] = []
        for length in 0...longest {
            starts.append(order.count)
            order += rows.filter { $0.name.utf8CodeUnitCount == length }.map(\.field.rawValue)
        }
        starts.append(order.count)
        self.starts = .allocate(capacity: starts.count)
        _ = self.starts.initialize(from: starts)
        self.order = .allocate(capacity: order.count)
        _ = self.order.initialize(from: order)
        names = .allocate(capacity: rows.count)
        _ = names.initialize(from: rows.map(\.name))
    }

    deinit {
        starts.deallocate()
        order.deallocate()
        names.deallocate()
    }

    /// The field named by these bytes, if any.
    @inline(__always)
    func field(_ name: UnsafeRawBufferPointer) -> EventField? {
        let length = name.count
        guard length + 1 < starts.count, let base = name.baseAddress else { return nil }
        var k = starts[length]
        let end = starts[length + 1]
        while k < end {
            let raw = order[k]
            if JSONGrammar.sameBytes(names[Int(raw)].utf8Start, base, count: length) { return EventField(rawValue: raw) }
            k += 1
        }
        return nil
    }

    /// The field named `name`, if any.
    func field(_ name: String) -> EventField? {
        if let found = name.utf8.withContiguousStorageIfAvailable({ field(UnsafeRawBufferPointer($0)) }) { return found }
        var name = name
        return name.withUTF8 { field(UnsafeRawBufferPointer($0)) }
    }
}
