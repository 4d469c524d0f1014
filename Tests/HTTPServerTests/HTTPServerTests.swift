import Testing
@testable import HTTPServer

@Test func placeholderHTTPServer() {}
