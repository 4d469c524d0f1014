import Testing
@testable import LiveActivityReporter

@Test func placeholderReporter() {}
