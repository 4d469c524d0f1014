extension Substring {
    /// Without trailing line feeds, as the last field of a `/proc` line ends.
    func trimmingNewline() -> Substring {
        var result = self
        while result.last == "\n" { result = result.dropLast() }
        return result
    }
}
