/// A request's header fields as received: every name and value as raw bytes in one buffer, in
/// order, copied once while libmicrohttpd still holds them (its copy goes with the connection's
/// next request, and a request may be read long after: decoded off the polling threads, or kept).
///
/// Nothing is made of a field until a handler asks for it: no string, no lowercasing, no
/// dictionary per request. The one lookup rule (``value(named:)``, which ``HTTPRequest/header(_:)``
/// and ``HTTPRequest/headers`` both use): names compared case-insensitively, by their lowercased
/// forms as a `[String: String]` keyed by `name.lowercased()` always compared them; the values of
/// repeated fields joined with `", "` in the order received.
struct HeaderFields: Sendable {
    /// Each field as its name's and its value's lengths (4 bytes each, native order), then the
    /// name's bytes and the value's.
    private var storage: [UInt8] = []

    init() {}

    /// Room for the `count` fields of a head of `bytes` received: a field was received with at
    /// least a colon and a line end, and is kept with 8 bytes of lengths.
    init(reservingFor count: Int, receivedBytes bytes: Int) {
        storage.reserveCapacity(bytes + 6 * count)
    }

    /// The fields of a dictionary (a request made in process), in its order.
    init(_ fields: [String: String]) {
        for (name, value) in fields { append(name: name, value: value) }
    }

    mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        withUnsafeBytes(of: UInt32(name.count)) { storage.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(value.count)) { storage.append(contentsOf: $0) }
        storage.append(contentsOf: name)
        storage.append(contentsOf: value)
    }

    mutating func append(name: String, value: String) {
        var name = name, value = value
        name.withUTF8 { name in
            value.withUTF8 { value in append(name: UnsafeRawBufferPointer(name), value: UnsafeRawBufferPointer(value)) }
        }
    }

    /// Calls `body` with each field's name and value, in order.
    func forEach(_ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void) {
        storage.withUnsafeBytes { bytes in
            var at = 0
            while at < bytes.count {
                let nameCount = Int(bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self))
                let valueCount = Int(bytes.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self))
                let name = at + 8
                body(UnsafeRawBufferPointer(rebasing: bytes[name..<name + nameCount]),
                     UnsafeRawBufferPointer(rebasing: bytes[name + nameCount..<name + nameCount + valueCount]))
                at = name + nameCount + valueCount
            }
        }
    }

    /// The values of the fields named `name`, joined with `", "` in order; nil if there is none.
    func value(named name: String) -> String? {
        let wanted = FieldName(name)
        var joined: [UInt8]?
        forEach { fieldName, value in
            guard wanted.matches(fieldName) else { return }
            if joined == nil {
                joined = Array(value)
            } else {
                joined!.append(contentsOf: ", ".utf8)
                joined!.append(contentsOf: value)
            }
        }
        return joined.map { String(decoding: $0, as: UTF8.self) }
    }

    /// Every field keyed by its lowercased name, with ``value(named:)``'s value, in one walk:
    /// its rule (names equal when their lowercased forms are, values joined in order) is the
    /// dictionary's own key equality here.
    var dictionary: [String: String] {
        var joined: [String: [UInt8]] = [:]
        forEach { name, value in
            let key = String(decoding: name, as: UTF8.self).lowercased()
            if let index = joined.index(forKey: key) {
                joined.values[index].append(contentsOf: ", ".utf8)
                joined.values[index].append(contentsOf: value)
            } else {
                joined[key] = Array(value)
            }
        }
        return joined.mapValues { String(decoding: $0, as: UTF8.self) }
    }

    /// These fields without those named `name`, and with one `name: value` at the end.
    func replacing(_ name: String, with value: String) -> HeaderFields {
        let wanted = FieldName(name)
        var replaced = HeaderFields()
        forEach { fieldName, fieldValue in
            if !wanted.matches(fieldName) { replaced.append(name: fieldName, value: fieldValue) }
        }
        replaced.append(name: name, value: value)
        return replaced
    }
}

/// A header name to find among fields received as bytes. Names are tokens, ASCII in practice:
/// two ASCII names are compared byte by byte without case, which is what comparing their
/// lowercased strings gives; when either is not ASCII, they are compared as strings lowercased
/// (`"\u{212A}"`, the Kelvin sign, lowercases to an ASCII `k`).
struct FieldName: Sendable {
    let name: String
    private let isASCII: Bool

    init(_ name: String) {
        self.name = name
        isASCII = name.utf8.allSatisfy { $0 < 0x80 }
    }

    func matches(_ field: UnsafeRawBufferPointer) -> Bool {
        matches(field, fieldIsASCII: field.allSatisfy { $0 < 0x80 })
    }

    func matches(_ field: UnsafeRawBufferPointer, fieldIsASCII: Bool) -> Bool {
        if isASCII && fieldIsASCII {
            return field.count == name.utf8.count
                && (name.utf8.withContiguousStorageIfAvailable { Self.equalIgnoringCase(field, UnsafeRawBufferPointer($0)) }
                    ?? Self.equalIgnoringCase(field, Array(name.utf8)))
        }
        return String(decoding: field, as: UTF8.self).lowercased() == name.lowercased()
    }

    /// The index of the first of `names` that `field` is, or nil.
    static func firstIndex(in names: [FieldName], of field: UnsafeRawBufferPointer) -> Int? {
        let fieldIsASCII = field.allSatisfy { $0 < 0x80 }
        return names.firstIndex { $0.matches(field, fieldIsASCII: fieldIsASCII) }
    }

    /// Two ASCII names of the same length, equal but for the case of their letters.
    private static func equalIgnoringCase(_ a: UnsafeRawBufferPointer, _ b: some RandomAccessCollection<UInt8>) -> Bool {
        var i = b.startIndex
        for byte in a {
            if lowered(byte) != lowered(b[i]) { return false }
            i = b.index(after: i)
        }
        return true
    }

    private static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
