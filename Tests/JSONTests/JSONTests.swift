import Testing
@testable import JSON

@Test func placeholderJSON() {}
