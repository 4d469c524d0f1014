/// A failure a test helper throws, in words: the test that called it fails with them.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
