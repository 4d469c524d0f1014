/// One problem with one event of a request, as the 422 body reports it.
public struct FieldError: Sendable, Equatable, Error {
    /// The event's position in the request (0-based, in body order).
    public var index: Int
    /// The offending field, or "" when the problem is the event as a whole.
    public var field: String
    public var error: String

    public init(index: Int, field: String, error: String) {
        self.index = index
        self.field = field
        self.error = error
    }
}
