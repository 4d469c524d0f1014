import HTTPServer
import JSON

/// Every error a handler can answer with, turned into an HTTP response in one place.
public enum APIError: Error, Sendable, Equatable {
    case badRequest(String)
    case unauthorized
    /// Refused whatever the token (a request for a non-loopback name: see `LoopbackHost`).
    case forbidden(String)
    case notFound(String)
    case methodNotAllowed(allowed: String)
    case payloadTooLarge(String)
    case unsupportedMediaType(String)
    case invalidEvents([FieldError])
    /// The store cannot take writes (disk full, read-only database): retry later.
    case unavailable(String)
    /// The in-flight budget (`--max-inflight-bytes`) is spent: retry shortly, as the HTTP
    /// layer's own refusal says.
    case overBudget(String)

    public var status: Int {
        switch self {
        case .badRequest: 400
        case .unauthorized: 401
        case .forbidden: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .payloadTooLarge: 413
        case .unsupportedMediaType: 415
        case .invalidEvents: 422
        case .unavailable, .overBudget: 503
        }
    }

    public var response: HTTPResponse {
        var writer = JSONWriter()
        writer.beginObject()
        switch self {
        case .invalidEvents(let errors):
            writer.key("errors")
            writer.beginArray()
            for e in errors {
                writer.beginObject()
                writer.key("index"); writer.number(Int64(e.index))
                writer.key("field"); writer.string(e.field)
                writer.key("error"); writer.string(e.error)
                writer.endObject()
            }
            writer.endArray()
        default:
            writer.key("error"); writer.string(message)
        }
        writer.endObject()
        var response = HTTPResponse.json(status: status, writer.bytes)
        switch self {
        case .unauthorized: response.headers.append((name: "WWW-Authenticate", value: "Bearer"))
        case .methodNotAllowed(let allowed): response.headers.append((name: "Allow", value: allowed))
        case .unavailable: response.headers.append((name: "Retry-After", value: "5"))
        case .overBudget: response.headers.append((name: "Retry-After", value: "1"))
        default: break
        }
        return response
    }

    var message: String {
        switch self {
        case .badRequest(let m), .forbidden(let m), .notFound(let m), .payloadTooLarge(let m), .unsupportedMediaType(let m), .unavailable(let m),
             .overBudget(let m): m
        case .unauthorized: "unauthorized"
        case .methodNotAllowed(let allowed): "method not allowed; use \(allowed)"
        case .invalidEvents(let errors): "\(errors.count) invalid field(s)"
        }
    }
}

extension HTTPResponse {
    static func json(status: Int = 200, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: "application/json")], body: body)
    }

    static func json(status: Int = 200, _ build: (inout JSONWriter) -> Void) -> HTTPResponse {
        var writer = JSONWriter()
        build(&writer)
        return .json(status: status, writer.bytes)
    }
}
