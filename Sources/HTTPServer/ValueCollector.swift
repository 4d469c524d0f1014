import CMicroHTTPD
import Glibc

/// Gathers one kind of a request's key/value pairs (the query arguments) through
/// `MHD_get_connection_values_n`, whose iterator is a C callback. Lives for one call only.
/// (Header fields are copied as bytes by `RequestHead`'s own walk.) The sized walk, not the
/// C strings: a value with an encoded NUL (`state=%00active`) arrives whole, for the handler to
/// refuse, rather than cut at the NUL into another value (`state=`, no filter).
final class ValueCollector {
    private(set) var pairs: [(String, String)] = []

    /// Every (name, value) of `kind` on `connection`, in the order received.
    static func values(of kind: MHD_ValueKind, on connection: OpaquePointer) -> [(String, String)] {
        // Most requests have no query arguments: no collector for them.
        guard count(of: kind, on: connection) > 0 else { return [] }
        return collect(kind, on: connection).pairs
    }

    /// The pairs of `kind`.
    private static func collect(_ kind: MHD_ValueKind, on connection: OpaquePointer) -> ValueCollector {
        let collector = ValueCollector()
        // Room for all at once (a count is a walk of libmicrohttpd's list, no copy): growing
        // by appends reallocated the array twice for a request's three or four headers.
        collector.pairs.reserveCapacity(count(of: kind, on: connection))
        withExtendedLifetime(collector) {
            _ = MHD_get_connection_values_n(connection, kind, collectValue,
                                            Unmanaged.passUnretained(collector).toOpaque())
        }
        return collector
    }

    /// How many pairs of `kind` libmicrohttpd holds, without copying them.
    static func count(of kind: MHD_ValueKind, on connection: OpaquePointer) -> Int {
        max(0, Int(MHD_get_connection_values(connection, kind, nil, nil)))
    }

    fileprivate func append(_ name: UnsafePointer<CChar>, _ nameSize: Int, _ value: UnsafePointer<CChar>?, _ valueSize: Int) {
        // `?flag` has a NULL value.
        pairs.append((Self.text(name, nameSize), value.map { Self.text($0, valueSize) } ?? ""))
    }

    /// `size` bytes as UTF-8 (ill-formed sequences repaired, as `String(cString:)` does).
    private static func text(_ bytes: UnsafePointer<CChar>, _ size: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(start: bytes, count: size), as: UTF8.self)
    }
}

/// `MHD_KeyValueIteratorN`; `cls` is the ValueCollector.
private func collectValue(cls: UnsafeMutableRawPointer?, kind: MHD_ValueKind, key: UnsafePointer<CChar>?, keySize: Int,
                          value: UnsafePointer<CChar>?, valueSize: Int) -> MHD_Result {
    guard let cls, let key else { return .YES }
    Unmanaged<ValueCollector>.fromOpaque(cls).takeUnretainedValue().append(key, keySize, value, valueSize)
    return .YES
}
