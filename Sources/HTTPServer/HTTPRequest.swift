/// One HTTP request as a handler sees it: everything already read and decoded.
///
/// Built by ``HTTPServer`` from what libmicrohttpd parsed, or directly with
/// ``init(method:path:query:headers:body:remoteAddress:)`` so that handlers can be
/// tested in process without a socket.
public struct HTTPRequest: Sendable {
    /// The request method as sent, e.g. `"GET"` or `"POST"`.
    public var method: String
    /// The path as the client sent it: still percent-encoded, without the query string, e.g.
    /// `"/api/bookings/2026%2F1042"`. Route on ``pathSegments``, which splits it at each `/`
    /// before decoding, so that an encoded slash stays inside its segment.
    public var path: String
    /// Decoded query arguments (by libmicrohttpd: `+` is a space, a `%` not followed by two hex
    /// digits is kept, a decoded NUL ends the value); when a name repeats, the last value wins.
    /// An argument without `=` (as in `?flag`) has the value `""`.
    public var query: [String: String]
    /// Request headers keyed by lowercased name. Repeated headers are joined with `", "`.
    /// Made from the fields at each read: a handler that wants one field asks ``header(_:)``.
    public var headers: [String: String] { fields.dictionary }
    /// The header fields as received, read only when a handler asks.
    var fields: HeaderFields
    /// The whole request body (at most the server's `maxBodyBytes`).
    public var body: [UInt8]
    /// The peer's IP address (`"127.0.0.1"`, `"::1"`, …), when known.
    public var remoteAddress: String?
    /// The in-flight budget the body is held in (``HTTPServer/Configuration/maxInflightBodyBytes``),
    /// for what the handler makes of the body and keeps until it answers (``holdInflight(_:)``);
    /// nil for a request made in process, which no budget bounds.
    public var inflightBudget: (any InflightBudget)?

    /// Creates a request; ``header(_:)`` finds each header whatever the case of its name.
    public init(method: String, path: String, query: [String: String] = [:],
                headers: [String: String] = [:], body: [UInt8] = [], remoteAddress: String? = nil) {
        self.init(method: method, path: path, query: query, fields: HeaderFields(headers),
                  body: body, remoteAddress: remoteAddress)
    }

    /// For the server, with the fields `RequestHead` copied as received.
    init(method: String, path: String, query: [String: String], fields: HeaderFields,
         body: [UInt8], remoteAddress: String?) {
        self.method = method
        self.path = path
        self.query = query
        self.fields = fields
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// Holds `bytes` more of the request's in-flight budget until it is answered; false, holding
    /// nothing, when the budget is spent (answer 503 then). Always true without a budget.
    public func holdInflight(_ bytes: Int) -> Bool {
        inflightBudget?.hold(bytes) ?? true
    }

    /// The value of the header `name`, compared case-insensitively; repeated headers are joined
    /// with `", "` in the order received.
    public func header(_ name: String) -> String? {
        fields.value(named: name)
    }
}

/// Where a request holds memory until it is answered (``HTTPResponder``).
public protocol InflightBudget: Sendable {
    /// Holds `bytes` more; false, holding nothing, when that would go over the budget.
    func hold(_ bytes: Int) -> Bool
    /// Holds `bytes` for an answer's body until libmicrohttpd has sent it and let it go (the
    /// hold goes in ``HTTPResponse/answerHold``); nil, holding nothing, when that would go over
    /// the budget while other requests or answers hold some of it.
    func holdAnswer(_ bytes: Int) -> AnswerHold?
}

/// Bytes of the in-flight budget an answer's body holds while libmicrohttpd keeps it: until
/// the client has read it, however slowly, or the connection is gone. Given back when the last
/// reference goes.
public final class AnswerHold: Sendable {
    private let core: ServerCore
    let bytes: Int

    init(core: ServerCore, bytes: Int) {
        self.core = core
        self.bytes = bytes
    }

    deinit {
        if bytes > 0 { core.inflightBodyBytes.wrappingSubtract(bytes, ordering: .relaxed) }
    }
}
