import HTTPServer

extension HTTPResponse {
    /// 200 with a text body.
    static func text(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: "text/plain")], body: Array(text.utf8))
    }
}
