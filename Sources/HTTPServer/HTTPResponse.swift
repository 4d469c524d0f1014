/// What a handler answers: a status, headers and a body held in memory.
///
/// `Content-Length` is computed by the server; the configured default headers are
/// added unless the handler already set a header of the same name.
public struct HTTPResponse: Sendable {
    /// The HTTP status code (100…999; anything else is answered as 500).
    public var status: Int
    /// Headers in the order they are sent. Names may repeat (e.g. `Set-Cookie`).
    public var headers: [(name: String, value: String)]
    /// The body bytes, copied into libmicrohttpd when the response is queued.
    public var body: [UInt8]
    /// The in-flight budget the body holds while libmicrohttpd keeps its copy
    /// (``InflightBudget/holdAnswer(_:)``); nil for an answer that holds none.
    public var answerHold: AnswerHold?

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
