import HTTPServer

extension HTTPServer {
    /// A server on 127.0.0.1, port 0, with test-sized limits adjusted by `configure`.
    static func forTesting(_ configure: (inout Configuration) -> Void = { _ in },
                           handler: @escaping HTTPHandler) throws(HTTPServerError) -> HTTPServer {
        var configuration = Configuration()
        configuration.connectionTimeoutSeconds = 5
        configuration.shutdownGracePeriodSeconds = 5
        configure(&configuration)
        return try HTTPServer(configuration: configuration, handler: handler)
    }
}
