/// A JSON value kept as the compact text ``JSONWriter`` wrote for it: for values the server
/// only passes through (an activity's `content_state` and `attributes`), which are stored and
/// served as they came, so they need not be parsed again or written again at each use.
///
/// Only ``JSONWriter`` output makes one (or text read back from where such output was stored),
/// so the text is valid JSON and escaped as the writer escapes, safe inside HTML.
public struct JSONText: Sendable, Hashable {
    public let text: String

    /// The compact text of `value`.
    public init(_ value: JSONValue) {
        text = value.jsonString
    }

    /// Text that a ``JSONWriter`` wrote earlier and that was stored; not checked again.
    public init(written text: String) {
        self.text = text
    }
}
