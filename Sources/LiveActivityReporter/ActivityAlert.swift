/// The `alert` of an update: what the phone shows (and sounds) with it.
public struct ActivityAlert: Sendable, Hashable, Encodable {
    public var title: String?
    public var body: String?

    public init(title: String? = nil, body: String? = nil) {
        self.title = title
        self.body = body
    }
}
