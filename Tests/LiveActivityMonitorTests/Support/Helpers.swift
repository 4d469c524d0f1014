import HTTPServer

enum HTTPClientFactory {
    static func make(port: Int) -> HTTPClient { HTTPClient(port: port) }
}
