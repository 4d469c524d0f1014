extension JSONValue: CustomStringConvertible {
    /// Compact JSON text, escaped like everything ``JSONWriter`` writes (safe inside HTML).
    public var jsonString: String {
        var writer = JSONWriter()
        writer.write(self)
        return writer.string
    }

    /// Compact JSON bytes (UTF-8), as ``jsonString``.
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter()
        writer.write(self)
        return writer.bytes
    }

    public var description: String { jsonString }
}
