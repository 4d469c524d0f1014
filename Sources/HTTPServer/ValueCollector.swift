import CMicroHTTPD

/// Gathers one kind of a request's key/value pairs (headers, query arguments) through
/// `MHD_get_connection_values`, whose iterator is a C callback. Lives for one call only.
final class ValueCollector {
    private(set) var pairs: [(String, String)] = []

    /// Every (name, value) of `kind` on `connection`, in the order received.
    static func values(of kind: MHD_ValueKind, on connection: OpaquePointer) -> [(String, String)] {
        let collector = ValueCollector()
        withExtendedLifetime(collector) {
            _ = MHD_get_connection_values(connection, kind, collectValue,
                                          Unmanaged.passUnretained(collector).toOpaque())
        }
        return collector.pairs
    }

    fileprivate func append(_ name: String, _ value: String) {
        pairs.append((name, value))
    }
}

/// `MHD_KeyValueIterator`; `cls` is the ValueCollector.
private func collectValue(cls: UnsafeMutableRawPointer?, kind: MHD_ValueKind,
                          key: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?) -> MHD_Result {
    guard let cls, let key else { return .YES }
    // `?flag` has a NULL value.
    Unmanaged<ValueCollector>.fromOpaque(cls).takeUnretainedValue()
        .append(String(cString: key), value.map { String(cString: $0) } ?? "")
    return .YES
}
