import CMicroHTTPD
import Glibc

/// Gathers one kind of a request's key/value pairs (the query arguments) through
/// `MHD_get_connection_values`, whose iterator is a C callback. Lives for one call only.
/// (Header fields are copied as bytes by `RequestHead`'s own walk.)
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
            _ = MHD_get_connection_values(connection, kind, collectValue,
                                          Unmanaged.passUnretained(collector).toOpaque())
        }
        return collector
    }

    /// How many pairs of `kind` libmicrohttpd holds, without copying them.
    static func count(of kind: MHD_ValueKind, on connection: OpaquePointer) -> Int {
        max(0, Int(MHD_get_connection_values(connection, kind, nil, nil)))
    }

    fileprivate func append(_ name: UnsafePointer<CChar>, _ value: UnsafePointer<CChar>?) {
        // `?flag` has a NULL value.
        pairs.append((String(cString: name), value.map { String(cString: $0) } ?? ""))
    }
}

/// `MHD_KeyValueIterator`; `cls` is the ValueCollector.
private func collectValue(cls: UnsafeMutableRawPointer?, kind: MHD_ValueKind,
                          key: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?) -> MHD_Result {
    guard let cls, let key else { return .YES }
    Unmanaged<ValueCollector>.fromOpaque(cls).takeUnretainedValue().append(key, value)
    return .YES
}
