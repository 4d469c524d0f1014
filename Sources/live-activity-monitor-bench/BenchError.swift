/// A bench step that could not run (a tool missing, a server that did not start, a failed request).
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
